const {build}=require('esbuild');
const target=process.argv[2], entry=process.argv[3]||'functions/api.ts';
const stub={name:'stub',setup(b){b.onResolve({filter:/^@aws-sdk\/credential-provider-node$/},a=>({path:a.path,namespace:'stub'}));b.onLoad({filter:/.*/,namespace:'stub'},a=>({contents:"import {fromEnv} from '@aws-sdk/credential-provider-env'; export const defaultProvider=(i)=>fromEnv(i);",resolveDir:process.cwd()}))}};build({plugins:[stub],entryPoints:[entry],bundle:true,platform:'node',format:'esm',target:'node22',mainFields:['module','main'],minify:true,metafile:true,write:false}).then(r=>{
 const ins=r.metafile.inputs; const parents={};
 for(const [f,v] of Object.entries(ins)) for(const i of v.imports) (parents[i.path]??=[]).push(f);
 const start=Object.keys(ins).filter(f=>f.includes(target));
 // BFS up to entry
 const seen=new Map(); const q=[...start]; start.forEach(s=>seen.set(s,null));
 while(q.length){const c=q.shift(); if(c===entry){let p=c,chain=[];while(p){chain.push(p);p=seen.get(p);} console.log(chain.reverse().join('\n  <- ')); return;} for(const p of parents[c]||[]) if(!seen.has(p)){seen.set(p,c);q.push(p);}}
});
