// The web view's page: one HTML document, its style and script inside, nothing fetched from
// elsewhere (the cluster may have no internet). It reads the API as the user who opened it
// (lockstep web's proxy on a local port, or a bearer token) and redraws on every event of the
// stream (GET /api/v1/events, a long poll). Text from users goes in through textContent only.
#include "controller/web_routes.h"

namespace lockstep::controller {

const std::string& WebPage() {
  static const std::string page = R"LOCKSTEP_WEB(<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>lockstep</title>
<meta name="viewport" content="width=device-width, initial-scale=1">
<style>
body{font:14px system-ui,sans-serif;margin:0;color:#1d232a;background:#f6f7f9}
header{background:#1d2a3a;color:#fff;padding:10px 18px;display:flex;gap:18px;align-items:baseline}
header h1{font-size:18px;margin:0}header a{color:#bcd}main{padding:14px 18px}
section{background:#fff;border:1px solid #dde1e6;border-radius:6px;margin-bottom:14px;padding:10px 14px}
h2{font-size:15px;margin:4px 0 10px}table{border-collapse:collapse;width:100%}
td,th{text-align:left;padding:4px 8px;border-bottom:1px solid #eef0f3;vertical-align:top}
th{font-weight:600;color:#556}.map{display:flex;flex-wrap:wrap;gap:8px}
.node{width:150px;border-radius:6px;padding:6px 8px;cursor:pointer;border:1px solid rgba(0,0,0,.15)}
.node .name{font-weight:600}.node .why{font-size:12px;margin-top:2px}
.gpus{display:flex;gap:3px;margin-top:5px;flex-wrap:wrap}.gpu{width:14px;height:14px;border-radius:3px;background:#fff;border:1px solid rgba(0,0,0,.25)}
.idle{background:#d9f2d9}.mixed{background:#ffe9a8}.allocated{background:#f7b36b}.completing{background:#f7d08a}
.drained,.draining{background:#b8bec6}.down{background:#f2a3a3}
.legend span{display:inline-block;padding:1px 8px;border-radius:4px;margin-right:6px;font-size:12px}
a{color:#1f5fa8;cursor:pointer}.muted{color:#778}.denied{color:#a12a2a;font-weight:600}
pre{background:#f3f4f6;padding:8px;overflow:auto;max-height:300px}
.bar{height:10px;background:#e6e9ee;border-radius:5px;position:relative;margin:6px 0 2px}
.bar span{position:absolute;top:0;height:10px;border-radius:5px}
</style></head><body>
<header><h1>lockstep</h1><a href="#">cluster</a><a href="#qos" data-nav="qos">QoS</a><a href="#shares" data-nav="shares">fair share</a><span id="who" class="muted"></span><span id="live" class="muted"></span></header>
<main id="main"></main>
<script>
"use strict";
const S={nodes:[],jobs:[],parts:[],me:null,events:[],next:0};
const REASONS={
 Priority:"waiting for jobs of higher priority to start first",
 Resources:"waiting for resources (GPUs, CPUs or memory) to be free",
 Dependency:"waiting for the jobs it depends on",
 DependencyNeverSatisfied:"its dependencies can never be satisfied",
 BeginTime:"waiting for its begin time",
 JobHeldUser:"held by its owner (scontrol release to let it run)",
 JobHeldAdmin:"held by an operator",
 PartitionTimeLimit:"its time limit exceeds the partition's",
 PartitionNodeLimit:"it asks for more nodes than the partition allows",
 ReqNodeNotAvail:"the nodes it needs are drained or down",
 QOSGrpGRES:"its QoS's GPU limit is reached",
 QOSMaxGRESPerUser:"your GPU limit in this QoS is reached",
 AssocGrpGRES:"its account's GPU limit is reached",
 ReservationSearchLimit:"the scheduler's reservation search stopped before it",
 None:"not yet considered by the scheduler"};
function plain(r){return REASONS[r]||r}
function el(tag,attrs,...kids){const e=document.createElement(tag);for(const[k,v]of Object.entries(attrs||{})){if(k==="class")e.className=v;else if(k==="onclick")e.onclick=v;else e.setAttribute(k,v)}
 for(const k of kids){if(k==null)continue;e.append(k instanceof Node?k:document.createTextNode(String(k)))}return e}
function when(t){if(!t)return"";const d=new Date(t*1000);return d.toLocaleString()}
function expand(list){const out=[];if(!list)return out;let depth=0,cur="";const parts=[];
 for(const c of list){if(c==="[")depth++;if(c==="]")depth--;if(c===","&&depth===0){parts.push(cur);cur=""}else cur+=c}if(cur)parts.push(cur);
 for(const p of parts){const m=p.match(/^(.*)\[(.*)\](.*)$/);if(!m){out.push(p);continue}
  for(const r of m[2].split(",")){const[a,b]=r.split("-");if(b===undefined){out.push(m[1]+a+m[3]);continue}
   for(let i=+a;i<=+b;i++)out.push(m[1]+String(i).padStart(a.length,"0")+m[3])}}return out}
function hue(s){let h=0;for(const c of s)h=(h*31+c.charCodeAt(0))%360;return "hsl("+h+",60%,55%)"}
// On lockstepd's HTTPS listener every request needs a bearer token (lockstep token): asked once,
// kept for the browser tab only. Through lockstep web the proxy carries the user's.
let TOKEN=sessionStorage.getItem("lockstep_token")||"";
function askToken(why){const f=el("form",{"data-token-form":""},el("p",{},"This lockstepd asks for a token: run ",el("code",{},"lockstep token")," and paste the value of LOCKSTEP_TOKEN. "+(why||"")),
 el("input",{type:"password",name:"token",size:60,autocomplete:"off"}),el("button",{type:"submit"},"Open"));
 f.onsubmit=(ev)=>{ev.preventDefault();sessionStorage.setItem("lockstep_token",f.token.value.trim());location.reload()};
 document.getElementById("main").replaceChildren(f)}
async function api(path){const r=await fetch(path,{credentials:"same-origin",headers:TOKEN?{Authorization:"Bearer "+TOKEN}:{}});const j=await r.json().catch(()=>({}));
 if(r.status===401){askToken(j.error);const e=new Error("a token is needed");e.status=401;throw e}
 if(!r.ok){const e=new Error(j.error||("HTTP "+r.status));e.status=r.status;throw e}return j}
async function load(){const[n,j,p]=await Promise.all([api("/api/v1/nodes"),api("/api/v1/jobs"),api("/api/v1/partitions")]);
 S.nodes=n.nodes||[];S.jobs=j.jobs||[];S.parts=p.partitions||[]}
function baseState(s){s=s.replace("*","");return s==="allocated"||s==="mixed"||s==="idle"||s==="completing"||s==="drained"||s==="draining"?s:(s.startsWith("down")?"down":s)}
function jobsOn(node){return S.jobs.filter(j=>j.state!=="PENDING"&&expand(j.nodes).includes(node))}
function jobLink(j){return el("a",{href:"#job/"+j.job_id,"data-job-link":j.job_id},j.job_id)}
function mapView(){const sec=el("section",{},el("h2",{},"Nodes"),el("div",{class:"legend"},...["idle","mixed","allocated","draining","drained","down"].map(s=>el("span",{class:s},s))));
 const map=el("div",{class:"map"});
 for(const n of S.nodes){const st=baseState(n.state);const on=jobsOn(n.name);
  const gpus=el("div",{class:"gpus"});for(let i=0;i<n.gpus;i++){const g=el("div",{class:"gpu",title:"GPU "+i});if(i<n.gpus_alloc&&on.length){g.style.background=hue(on[Math.min(i,on.length-1)].user);g.title+=" "+on[Math.min(i,on.length-1)].user}gpus.append(g)}
  map.append(el("div",{class:"node "+st,"data-node":n.name,"data-state":st,title:n.reason||st,onclick:()=>{location.hash="#node/"+n.name}},
   el("div",{class:"name"},n.name),el("div",{},st+" · "+n.gpus_alloc+"/"+n.gpus+" GPUs"),n.reason?el("div",{class:"why","data-reason":""},n.reason):null,gpus))}
 sec.append(map);return sec}
function queueView(){const sec=el("section",{},el("h2",{},"Queue"));const t=el("table",{},el("tr",{},...["Job","User","Name","Partition","Why it waits","Expected start"].map(h=>el("th",{},h))));
 const pend=S.jobs.filter(j=>j.state==="PENDING");
 for(const j of pend)t.append(el("tr",{"data-pending":j.job_id},el("td",{},jobLink(j)),el("td",{},j.user),el("td",{},j.name),el("td",{},j.partition),
  el("td",{"data-why":""},plain(j.reason)),el("td",{"data-start":""},j.expected_start?when(j.expected_start):"unknown")));
 if(!pend.length)t.append(el("tr",{},el("td",{colspan:6,class:"muted"},"no job is waiting")));sec.append(t);return sec}
function runningView(){const sec=el("section",{},el("h2",{},"Running"));const t=el("table",{},el("tr",{},...["Job","User","Name","Partition","Nodes","GPUs","Started"].map(h=>el("th",{},h))));
 for(const j of S.jobs.filter(j=>j.state==="RUNNING"||j.state==="COMPLETING"))t.append(el("tr",{},el("td",{},jobLink(j)),el("td",{},j.user),el("td",{},j.name),el("td",{},j.partition),el("td",{},j.nodes),el("td",{},j.gpus),el("td",{},when(j.start_time))));
 sec.append(t);return sec}
// Slurm's secs2time_str: "UNLIMITED", "D-HH:MM:SS" or "HH:MM:SS"; `none` for no value.
function slurmTime(s,none){if(s===null||s===undefined)return none;const p=n=>String(n).padStart(2,"0");const d=Math.floor(s/86400);
 const t=p(Math.floor(s/3600)%24)+":"+p(Math.floor(s/60)%60)+":"+p(s%60);return d?d+"-"+t:t}
const INFINITE=2147483647;
function table(attrs,heads,rows){const t=el("table",attrs,el("tr",{},...heads.map(h=>el("th",{},h))));
 for(const r of rows)t.append(el("tr",r.attrs||{},...r.cells.map(v=>el("td",{},v))));return t}
// As scontrol show partition names them: MaxTime=UNLIMITED, DefaultTime=NONE, MaxNodes=UNLIMITED.
function partsView(){const sec=el("section",{},el("h2",{},"Partitions"));
 sec.append(table({"data-partitions":""},["PartitionName","Default","State","MaxTime","DefaultTime","MaxNodes","TotalNodes","Nodes","PriorityTier"],
  S.parts.map(p=>({attrs:{"data-partition":p.name},cells:[p.name,p.default?"YES":"NO",String(p.state||"up").toUpperCase(),slurmTime(p.max_time,"UNLIMITED"),
   slurmTime(p.default_time,"NONE"),p.max_nodes>=INFINITE?"UNLIMITED":p.max_nodes,p.node_count,p.nodes,p.priority_tier]}))));return sec}
// As sacctmgr show qos prints them.
async function qosView(){const sec=el("section",{"data-qos-page":""},el("h2",{},"QoS"));const q=(await api("/api/v1/qos")).qos||[];
 sec.append(table({},["Name","Priority","MaxWall","MaxTRESPU","GrpTRES","Preempt","PreemptMode","GraceTime"],
  q.map(x=>({attrs:{"data-qos":x.name},cells:[x.name+(x.default?" (default)":""),x.priority,slurmTime(x.max_wall,""),x.max_tres_per_user,x.grp_tres,x.preempt.join(","),x.preempt_mode,slurmTime(x.grace_time,"")]}))));return sec}
// As sshare -a -l prints the tree (Fair Tree): accounts indented by depth, users under them.
async function sharesView(){const sec=el("section",{"data-shares-page":""},el("h2",{},"Fair share"));const r=await api("/api/v1/shares");
 const f=(v,d)=>v===null||v===undefined?(d===undefined?"":d):Number(v).toFixed(6);
 sec.append(el("p",{class:"muted"},"Fair Tree: each user's factor is its rank over all users, walking accounts by Level FS (shares over usage, among siblings). "+
  "sprio's FAIRSHARE is the factor times PriorityWeightFairshare ("+r.fairshare_weight+")."));
 sec.append(table({},["Account","User","RawShares","NormShares","RawUsage","NormUsage","EffectvUsage","FairShare","LevelFS"],
  (r.shares||[]).map(s=>({attrs:s.user?{"data-share-user":s.user,"data-share-account":s.account}:{"data-share-account":s.account},
   cells:["\u00a0".repeat(2*s.depth)+s.account,s.user,s.parent?s.raw_shares:"",f(s.norm_shares),Math.floor(s.raw_usage),f(s.norm_usage),f(s.effective_usage),
    s.user?f(s.fairshare):"",s.parent?f(s.level_fs,"inf"):""]}))));return sec}
async function jobView(id){const sec=el("section",{"data-job-page":id},el("h2",{},"Job "+id));
 let d;try{d=await api("/api/v1/web/jobs/"+id)}catch(e){sec.append(el("p",{class:"denied","data-denied":""},e.message));return sec}
 const j=d.job;const rows=[["State",j.state+(j.state==="PENDING"?" — "+plain(j.reason):"")],["User",j.user],["Name",j.name],["Partition",j.partition],["Nodes",j.nodes||"—"],["GPUs",j.gpus],["Exit code",j.exit_code+(j.signal?" (signal "+j.signal+")":"")]];
 if(j.reason&&j.reason!=="None"&&j.state!=="PENDING")rows.push(["Cause",j.reason]);if(j.cause)rows.push(["Cause",j.cause]);
 sec.append(el("table",{"data-job-facts":""},...rows.map(([k,v])=>el("tr",{},el("th",{},k),el("td",{},v)))));
 const t0=j.submit_time,t2=j.end_time||Math.max(j.start_time||0,Math.floor(Date.now()/1000)),span=Math.max(1,t2-t0);
 const bar=el("div",{class:"bar"});if(j.start_time){const a=el("span",{});a.style.left="0";a.style.width=((j.start_time-t0)/span*100)+"%";a.style.background="#9bb7d4";bar.append(a);
  const b=el("span",{});b.style.left=((j.start_time-t0)/span*100)+"%";b.style.width=((t2-j.start_time)/span*100)+"%";b.style.background="#3b7d3b";bar.append(b)}
 sec.append(el("h2",{},"Timeline"),bar,el("div",{class:"muted"},"submitted "+when(j.submit_time)+(j.start_time?", started "+when(j.start_time):"")+(j.end_time?", ended "+when(j.end_time):"")));
 if(d.why&&j.state==="PENDING"){const w=d.why;sec.append(el("h2",{},"Why it waits"),el("table",{"data-why-page":""},
  el("tr",{},el("th",{},"Reason"),el("td",{},plain(w.reason||j.reason))),
  el("tr",{},el("th",{},"Expected start"),el("td",{},w.expected_start?when(w.expected_start):"unknown")),
  el("tr",{},el("th",{},"Jobs ahead of it"),el("td",{},(w.ahead||[]).join(", ")||"none"))))}
 if(d.priority){const p=d.priority;sec.append(el("h2",{},"Priority (sprio)"),el("table",{},el("tr",{},...["PRIORITY","AGE","FAIRSHARE","JOBSIZE","PARTITION","QOS","NICE"].map(h=>el("th",{},h))),
  el("tr",{},...[p.priority,p.age,p.fairshare,p.job_size,p.partition_factor,p.qos,p.nice].map(v=>el("td",{},v)))))}
 if(d.output_tail!==undefined)sec.append(el("h2",{},"Output (tail)"),el("pre",{"data-output":""},d.output_tail||d.output_error||"(empty)"));
 return sec}
function nodeView(name){const n=S.nodes.find(x=>x.name===name);const sec=el("section",{"data-node-page":name},el("h2",{},"Node "+name));
 if(!n){sec.append(el("p",{},"no such node"));return sec}
 sec.append(el("table",{},...[["State",n.state],["Reason",n.reason||"—"],["CPUs",n.cpus_alloc+"/"+n.cpus],["GPUs",n.gpus_alloc+"/"+n.gpus+" "+(n.gpu_type||"")],["Memory (MB)",n.mem_alloc_mb+"/"+n.mem_mb],["Partitions",(n.partitions||[]).join(",")]].map(([k,v])=>el("tr",{},el("th",{},k),el("td",{},v)))));
 const t=el("table",{},el("tr",{},...["Job","User","Name","State"].map(h=>el("th",{},h))));for(const j of jobsOn(name))t.append(el("tr",{},el("td",{},jobLink(j)),el("td",{},j.user),el("td",{},j.name),el("td",{},j.state)));
 sec.append(el("h2",{},"Jobs here"),t);const h=el("table",{});
 for(const e of S.events.filter(e=>e.node===name||(e.nodes||[]).includes(name)).slice(-30))h.append(el("tr",{},el("td",{},when(e.time)),el("td",{},e.kind+(e.job?" "+e.job:"")),el("td",{},e.reason||"")));
 sec.append(el("h2",{},"History"),h);return sec}
let drawing=Promise.resolve();
function draw(){drawing=drawing.then(async()=>{try{await load()}catch(e){if(e.status!==401)document.getElementById("main").replaceChildren(el("p",{class:"denied"},e.message));return}
 const h=location.hash.slice(1);const main=el("main",{id:"main"});
 if(h.startsWith("job/"))main.append(await jobView(h.slice(4)));else if(h.startsWith("node/"))main.append(nodeView(h.slice(5)));
 else if(h==="qos")main.append(await qosView());else if(h==="shares")main.append(await sharesView());
 else main.append(mapView(),queueView(),runningView(),partsView());document.getElementById("main").replaceWith(main)})}
async function follow(){for(;;){if(S.me===null)return;try{const r=await api("/api/v1/events?from="+S.next+"&wait_ms=25000");S.next=r.next;
 if(r.events.length){S.events.push(...r.events);S.events=S.events.slice(-2000);document.getElementById("live").textContent="live · "+r.events[r.events.length-1].kind;draw()}}
 catch(e){document.getElementById("live").textContent="reconnecting…";await new Promise(f=>setTimeout(f,2000))}}}
window.addEventListener("hashchange",draw);
(async()=>{try{S.me=await api("/api/v1/web/whoami");document.getElementById("who").textContent=S.me.user+(S.me.operator?" (operator)":"")}catch(e){if(e.status===401)return}
 draw();follow()})();
</script></body></html>
)LOCKSTEP_WEB";
  return page;
}

}  // namespace lockstep::controller
