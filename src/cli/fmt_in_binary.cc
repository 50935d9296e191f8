// fmt's compiled part, built into lockstep-slurm. Debian packages fmt as a shared library only
// (no libfmt.a), and libfmt.so would bring the shared C++ runtime back into a binary that links
// it statically to start fast. This is what libfmt.so itself is made of: format-inl.h's
// out-of-line functions (FMT_HEADER_ONLY is not defined, so they are emitted here, not inline)
// and the explicit instantiations that format.h declares extern. The linker then finds every
// fmt symbol here, and --as-needed drops libfmt.so.
#include <fmt/format-inl.h>

FMT_BEGIN_NAMESPACE
namespace detail {

template auto dragonbox::to_decimal(float x) noexcept -> dragonbox::decimal_fp<float>;
template auto dragonbox::to_decimal(double x) noexcept -> dragonbox::decimal_fp<double>;
template locale_ref::locale_ref(const std::locale& loc);
template auto locale_ref::get<std::locale>() const -> std::locale;
template auto thousands_sep_impl(locale_ref) -> thousands_sep_result<char>;
template auto decimal_point_impl(locale_ref) -> char;
template void buffer<char>::append(const char*, const char*);
template void vformat_to(buffer<char>&, string_view, basic_format_args<FMT_BUFFER_CONTEXT(char)>,
                         locale_ref);
template auto thousands_sep_impl(locale_ref) -> thousands_sep_result<wchar_t>;
template auto decimal_point_impl(locale_ref) -> wchar_t;
template void buffer<wchar_t>::append(const wchar_t*, const wchar_t*);

}  // namespace detail
FMT_END_NAMESPACE
