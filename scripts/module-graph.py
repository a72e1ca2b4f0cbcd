#!/usr/bin/env python3
# The import graph between the top-level modules of `tessera-core` (core/src) and of the root
# crate (src: http, startup), comments and test-only files left out, and any cycle in it:
# `python3 scripts/module-graph.py [-v]` from the repository root.
import re,os,sys,collections
mods=['agent','asks','auth','chat','config','demo','eval','http','llm','mcp','net','notify','pages','startup','telemetry','util','workflow','store','forms']
edges=collections.defaultdict(set)
for crate in ('core/src','src'):
  for root,_,files in os.walk(crate):
    for f in files:
        if not f.endswith('.rs'): continue
        p=os.path.join(root,f)
        rel=p[len(crate)+1:]
        top=rel.split('/')[0].replace('.rs','')
        if top not in mods: continue
        if f in ('test_support.rs','provider_fixtures.rs'): continue
        s=open(p).read()
        s='\n'.join(l for l in s.split('\n') if not l.strip().startswith('//'))
        # strip test modules roughly
        i=s.find('#[cfg(test)]\nmod tests')
        if i>=0: s=s[:i]
        for m in re.findall(r'crate::([a-z_]+)',s):
            if m in mods and m!=top: edges[top].add(m)
        # grouped use crate::{a::..., b::...}
        for g in re.findall(r'use crate::\{([^;]*)\};',s,re.S):
            depth=0; tok=''
            for ch in g:
                if ch=='{': depth+=1
                elif ch=='}': depth-=1
                elif ch==',' and depth==0:
                    n=tok.strip().split('::')[0]
                    if n in mods and n!=top: edges[top].add(n)
                    tok=''; continue
                tok+=ch
            n=tok.strip().split('::')[0]
            if n in mods and n!=top: edges[top].add(n)
# find cycles: SCCs
index={};low={};st=[];on=set();sccs=[];c=[0]
def sc(v):
    index[v]=low[v]=c[0];c[0]+=1;st.append(v);on.add(v)
    for w in edges[v]:
        if w not in index: sc(w);low[v]=min(low[v],low[w])
        elif w in on: low[v]=min(low[v],index[w])
    if low[v]==index[v]:
        comp=[]
        while True:
            w=st.pop();on.discard(w);comp.append(w)
            if w==v:break
        sccs.append(comp)
for v in mods: 
    if v not in index: sc(v)
for comp in sccs:
    if len(comp)>1: print('cycle:',sorted(comp))
if '-v' in sys.argv:
    for k in sorted(edges): print(k,'->',sorted(edges[k]))
