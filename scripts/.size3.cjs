const {build}=require('esbuild');
const path=require('path');
const stubs={'@aws-sdk/credential-provider-node':"import {fromEnv} from '@aws-sdk/credential-provider-env'; export const defaultProvider=(i)=>fromEnv(i);",
'@smithy/core/event-streams':"const no=()=>{throw new Error('no event streams')}; export const EventStreamSerde=no, eventStreamSerdeProvider=no;"};
const stub={name:'stub',setup(b){b.onResolve({filter:/^(@aws-sdk\/credential-provider-node|@smithy\/core\/event-streams)$/},a=>({path:a.path,namespace:'stub'}));b.onLoad({filter:/.*/,namespace:'stub'},a=>({contents:stubs[a.path],resolveDir:process.cwd()}))}};
const pure={name:'pure',setup(b){b.onResolve({filter:/.*/},async a=>{ if(a.pluginData==='x') return; if(!/node_modules\/(@smithy|@aws-sdk)\//.test(a.importer) && !/^(@smithy|@aws-sdk)\//.test(a.path)) return; if(a.path.startsWith('stub')) return; const r=await b.resolve(a.path,{kind:a.kind,resolveDir:a.resolveDir,importer:a.importer,pluginData:'x'}); if(r.errors.length) return; return {...r, sideEffects:false};});}};
const plugins=process.argv[4]==='nopure'?[stub]:[stub,pure];
build({entryPoints:[process.argv[2]],bundle:true,platform:'node',format:'esm',target:'node22',mainFields:['module','main'],minify:true,metafile:true,write:!!process.env.OUT,outfile:process.env.OUT||'x.mjs',plugins}).then(r=>{const out=Object.values(r.metafile.outputs)[0];console.log(out.bytes);const by={};
 for (const [f,v] of Object.entries(out.inputs)){ const k=f.replace(/^node_modules\/((@[^/]+\/)?[^/]+).*/,'$1').replace(/^(src|functions)\/.*/,'$1'); by[k]=(by[k]||0)+v.bytesInOutput;}
 if(process.env.FILES){console.log(Object.entries(out.inputs).sort((a,b)=>b[1].bytesInOutput-a[1].bytesInOutput).slice(0,+process.env.FILES).map(([k,v])=>k.replace("node_modules/","")+" "+v.bytesInOutput).join("\n"));return;} console.log(Object.entries(by).sort((a,b)=>b[1]-a[1]).slice(0,+process.argv[3]||0).map(([k,v])=>k+' '+v).join('\n'));});
