"""Test job: started without ./stompwatch run (no hook preloaded), it
attaches to a running daemon with stompwatch.connect(OUT) and watches."""

import sys, torch, stompwatch
from stompwatch import watcher, mstx
stompwatch.connect(sys.argv[1])
t = torch.zeros(16)
watcher.watch(t, name="t")
t[3] = 1.0
mstx.mark("hello")
x = torch.ones(8) * 3
watcher.remove(t)
print("connected ok")
