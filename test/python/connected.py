"""Test job: started without ./stompwatch run (no hook preloaded), it
attaches to a running daemon with stompwatch.connect(OUT), watches, and has
its CPU storages recorded by the client (the hook, loaded late, does not see
the allocator)."""

import sys, torch, stompwatch
from stompwatch import watcher, mstx
stompwatch.connect(sys.argv[1])
t = torch.zeros(16)
watcher.watch(t, name="t")
t[3] = 1.0
mstx.mark("hello")
x = torch.ones(8) * 3
watcher.remove(t)
kept = torch.ones(8) * 3  # nothing watched: plain recording
print("kept", hex(kept.data_ptr()))
print("connected ok")
