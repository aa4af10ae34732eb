"""The dispatch mode: sees every Aten op of this process while something
needs it (a watch, recording, access rows) and is not installed at all
otherwise.

Around an op, while a watch is open, the hook samples every watched block
before and after it (``stompwatch_op_begin``/``_end``), told which byte
extents the op may write: the arguments its schema marks written
(``alias_info.is_write``, TensorLists included). Outputs that alias no
input are new storages, which cannot hold a live watched block. After the
op, storages it created are recorded (MALLOC/FREE rows): by the hook itself
for CPU storages when it sees the allocator (the op's id is then written
into the hook's op word around the call, see ffi/hook/host_memory.c), here
otherwise. An out-of-memory error an op raises is told to the daemon
(``_oom``).
"""

import ctypes
import itertools
import sys
import threading

import torch
from torch.utils._python_dispatch import TorchDispatchMode, _get_current_dispatch_mode_stack, _pop_mode, _push_mode

from . import _device, _memory, _oom
from ._client import CLIENT

_Tensor = torch.Tensor


class _Plan:
    """What one op overload needs from each call, worked out once."""

    __slots__ = ("name", "id", "writes", "fresh", "single", "one_tensor", "tensor_args", "view_only",
                 "other_allocator")

    def __init__(self, func, id: int) -> None:
        schema = func._schema
        self.name = ("torch._ops." + str(func)).encode()
        # The op's name id in the hook's recorder (16 bits; 0: unnamed).
        self.id = id if id < 1 << 16 else 0
        short = schema.name.split("::")[-1]
        # Its CPU outputs may come from elsewhere than c10::alloc_cpu, which
        # the hook does not see: they are recorded here.
        self.other_allocator = short in _OTHER_ALLOCATORS
        undeclared = _UNDECLARED_WRITES.get(short, ())
        self.writes = tuple((i, a.name) for i, a in enumerate(schema.arguments)
                            if a.alias_info is not None and a.alias_info.is_write or i in undeclared)
        self.fresh = tuple(i for i, r in enumerate(schema.returns) if r.alias_info is None)
        if short == "lift_fresh":
            # torch.tensor(data): the storage was made outside any op
            # (unseen by the hook); this op hands it to the program.
            self.fresh = (0,)
        self.single = len(schema.returns) == 1
        # A view (t, view, detach, expand...): it only makes metadata, so it
        # cannot write memory and is not bracketed; a change around it shows
        # as one between the ops before and after.
        self.view_only = bool(schema.returns) and not self.writes and not self.fresh
        # The common case, given a path of its own: one new tensor out.
        self.one_tensor = self.single and self.fresh == (0,) and str(schema.returns[0].type) == "Tensor"
        # (position, name, written) of every argument that may hold tensors.
        self.tensor_args = tuple((i, a.name, bool(a.alias_info is not None and a.alias_info.is_write))
                                 for i, a in enumerate(schema.arguments) if "Tensor" in str(a.type))


_plans = {}
# Ops whose new CPU storages are not PyTorch's CPU allocator's: mapped
# files and page-locked memory (also any op given pin_memory=True).
_OTHER_ALLOCATORS = frozenset(("from_file", "_pin_memory", "pin_memory", "lift_fresh"))
# Ops whose schema does not mark arguments they write: batch norm updates
# its running mean and variance (positions 3 and 4) in training.
_UNDECLARED_WRITES = {name: (3, 4) for name in (
    "native_batch_norm", "_batch_norm_impl_index", "cudnn_batch_norm", "miopen_batch_norm", "batch_norm")}


def _plan(func) -> _Plan:
    plan = _plans[func] = _Plan(func, len(_plans) + 1)
    if _work.native is not None:
        _work.native.name_op(plan.id, plan.name)
    return plan


def extent(t):
    """(addr, bytes) of the memory a tensor's elements span, strides
    included; None for an empty tensor or one without strided memory
    (sparse, meta, nested)."""
    n = t.numel()
    if not n or t.layout != torch.strided or t.is_meta or t.is_nested:
        return None
    lo = hi = 0
    for size, stride in zip(t.shape, t.stride()):
        if stride > 0:
            hi += (size - 1) * stride
        else:
            lo += (size - 1) * stride
    itemsize = t.element_size()
    return t.data_ptr() + lo * itemsize, (hi - lo + 1) * itemsize


def _tensors(v):
    if isinstance(v, _Tensor):
        yield v
    elif isinstance(v, (list, tuple)):
        for t in v:
            if isinstance(t, _Tensor):
                yield t


# stompwatch_op_begin's flag: every extent is host memory (ffi/hook/framework_ops.c).
EXTENTS_HOST = 1 << 30


# The suite's CPU tensors posing as device memory (_device.pretend()).
_PRETEND = _device.pretend()


def _written(plan, args, kwargs):
    """The {addr, len} extents the op may write, flat, and whether they are
    all CPU memory; when some are not, the tensors go to _device, whose
    copier copies them for a `run --watch` window."""
    flat = []
    host = True
    for i, name in plan.writes:
        for t in _tensors(args[i] if i < len(args) else kwargs.get(name)):
            e = extent(t)
            if e:
                flat.extend(e)
                host = host and t.is_cpu and not _PRETEND
    if flat and not host:
        # All of them: a window may open on a CPU output of an op that also
        # writes device memory, and is then copied like the rest.
        written = [t for i, name in plan.writes for t in _tensors(args[i] if i < len(args) else kwargs.get(name))
                   if extent(t)]
        _device.written(_work.hook, plan.name, written)
    return flat, host


def _has_storage(t) -> bool:
    return t.layout == torch.strided and not t.is_meta and not t.is_nested and \
        type(t) in (_Tensor, torch.nn.Parameter)


def _record(plan, out, cpu_recorded: bool = False) -> None:
    """Records the storages of an op's new outputs; ``cpu_recorded``: the
    hook recorded the CPU ones as they were allocated."""
    name = _memory.label(plan.name)
    outs = (out,) if plan.single else out
    for i in plan.fresh:
        for t in _tensors(outs[i]):
            if _has_storage(t) and not (cpu_recorded and t.is_cpu):
                device, pool = _memory.device_of(t)
                _memory.record(t.untyped_storage(), device, pool, name)


_said = set()


def _trouble(plan, what: str, e: Exception) -> None:
    """Our bookkeeping failed on an op: the job goes on, told once per op."""
    key = (plan.name, what)
    if key not in _said:
        _said.add(key)
        print(f"stompwatch: cannot {what} for {plan.name.decode()}: {type(e).__name__}: {e}; "
              "that op's calls are left out", file=sys.stderr)


REC_ACCESS = 17
READ, WRITE, UNKNOWN = 0, 1, 2


def _access(hook, plan, args, kwargs, out) -> None:
    """ACCESS rows: each tensor argument read or written, each new output written."""
    _memory.flush()
    stack = _memory.python_stack(CLIENT.call_stack).encode() if CLIENT.call_stack else b""
    seen = set()
    rows = []
    for i, name, written in plan.tensor_args:
        for t in _tensors(args[i] if i < len(args) else kwargs.get(name)):
            seen.add(id(t))
            rows.append((t, WRITE if written else READ))
    for v in kwargs.values():
        for t in _tensors(v):
            if id(t) not in seen:
                rows.append((t, UNKNOWN))
    outs = (out,) if plan.single else out
    for i in plan.fresh:
        for t in _tensors(outs[i]):
            rows.append((t, WRITE))
    for t, kind in rows:
        if not _has_storage(t) or not t.numel():
            continue
        device, _ = _memory.device_of(t)
        shape = "x".join(str(s) for s in t.shape) or "scalar"
        label = b"\t".join((plan.name, str(t.dtype).encode(), shape.encode(), stack))
        hook.emit(REC_ACCESS, device, 0, t.data_ptr(), t.numel() * t.element_size(), 0, kind, label)


class _Work:
    """What the mode does per op, refreshed by :func:`sync` (read per op:
    plain attributes of one object, no calls)."""

    hook = None
    watching = False
    recording = False
    access = False
    plain_record = False  # recording with no owners and no call stack
    fast = False  # only plain recording to do
    native = None  # the hook's CPU storage recorder, when it sees the allocator
    native_word = None  # its op word, while plain recording is all there is to do

    def refresh(self) -> None:
        self.fast = self.recording and self.plain_record and not self.watching and not self.access
        self.native_word = self.native.op_word if self.fast and self.native is not None else None


_work = _Work()
_next_call = itertools.count(1).__next__
_live = _memory._live
_record_host = _memory.record_host
_STRIDED = torch.strided


def _bracketed(func, plan, args, kwargs):
    """The op between the hook's before and after samples of every watch."""
    try:
        _memory.flush()
        flat, host = _written(plan, args, kwargs)
    except Exception as e:  # never the job's problem; the op may then write nothing
        _trouble(plan, "find the memory an op may write", e)
        flat, host = [], False
    extents = (ctypes.c_uint64 * len(flat))(*flat)
    hook = _work.hook
    seq = hook.op_begin(plan.name, extents, len(flat) // 2 | (EXTENTS_HOST if flat and host else 0))
    if not seq:
        # Every watch has closed in the hook (dump_nums ran out, end op):
        # stop bracketing until the next watch or remove.
        _work.watching = False
        _work.refresh()
    try:
        return func(*args, **kwargs)
    finally:
        if seq:
            stack = _memory.python_stack(CLIENT.call_stack).encode() if CLIENT.call_stack else None
            hook.op_end(plan.name, seq, 0, stack)
        # A Ctrl-C the copier met while sampling around this op, now the op
        # is over.
        if _device._interrupted and _device.take_interrupt():
            raise KeyboardInterrupt


class StompwatchMode(TorchDispatchMode):
    """Brackets Aten ops for watches and records the storages they create."""

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        plan = _plans.get(func) or _plan(func)
        work = _work
        word = work.native_word
        if word is not None:
            # Plain recording, left to the hook for CPU storages: it is told
            # the op, and which call of it (ffi/hook/host_memory.c).
            word[0] = plan.id | _next_call() << 16
            try:
                out = func(*args, **kwargs) if kwargs else func(*args)
            except RuntimeError as e:
                _oom.seen(work.hook, plan.name, args, kwargs, e, hook_saw_cpu=True)
                raise
            finally:
                word[0] = 0
            if plan.one_tensor and not plan.other_allocator and not kwargs and out.is_cpu:
                return out  # the common case: the hook has it
            try:
                if plan.other_allocator or kwargs and kwargs.get("pin_memory"):
                    _record(plan, out)  # CPU outputs the hook cannot see too
                elif plan.fresh:
                    _record(plan, out, cpu_recorded=True)  # device outputs
            except Exception as e:  # never the job's problem
                _trouble(plan, "record memory", e)
            return out
        if work.fast and plan.one_tensor:
            # Recording only, nothing to label, one new tensor out: inline.
            try:
                out = func(*args, **kwargs) if kwargs else func(*args)
            except RuntimeError as e:
                _oom.seen(work.hook, plan.name, args, kwargs, e, hook_saw_cpu=False)
                raise
            try:
                if out.is_cpu and type(out) is _Tensor and out.layout == _STRIDED:
                    st = out.untyped_storage()
                    addr = st.data_ptr()
                    if addr not in _live:
                        _record_host(st, addr, plan.name)
                else:
                    _record(plan, out)
            except Exception as e:  # never the job's problem
                _trouble(plan, "record memory", e)
            return out
        if kwargs is None:
            kwargs = {}
        try:
            if work.watching and not plan.view_only:
                out = _bracketed(func, plan, args, kwargs)
            else:
                out = func(*args, **kwargs)
        except RuntimeError as e:
            _oom.seen(work.hook, plan.name, args, kwargs, e, hook_saw_cpu=False)
            raise
        try:
            if work.recording and plan.fresh:
                _record(plan, out)
            if work.access:
                _access(work.hook, plan, args, kwargs, out)
        except Exception as e:  # never the job's problem
            _trouble(plan, "record memory or accesses", e)
        return out


_mode = None
_lock = threading.Lock()


def _use_native(hook) -> None:
    """Lets the hook record CPU storages while recording is on and it can."""
    native = hook.host_recorder() if hook is not None else None
    if native is _work.native:
        return
    if _work.native is not None:
        _work.native.recording(0, 0)
    if native is not None:
        for plan in _plans.values():
            native.name_op(plan.id, plan.name)
        native.recording(1, 0)
    _work.native = native
    _work.refresh()
    if native is not None:
        # Kept once set: the hook tracks what it recorded until freed.
        _memory.use_native(native)


def sync(client) -> None:
    """Installs the mode when the client has work for it, removes it when not."""
    global _mode
    with _lock:
        want = client.active
        _work.hook = client.hook(required=False)
        _work.watching = client.started and (bool(client.watches) or client.cli_watch)
        _work.recording = client.started and client.recording
        _work.access = client.started and client.access
        _work.plain_record = not client.owners and not client.call_stack
        _work.refresh()
        _use_native(_work.hook if _work.recording else None)
        if want and _mode is None:
            _mode = StompwatchMode()
            _push_mode(_mode)
        elif not want and _mode is not None:
            stack = _get_current_dispatch_mode_stack()
            if stack and stack[-1] is _mode:
                _pop_mode()
                _mode = None
            # Another mode was pushed on top of ours: ours stays, idle.


def installed() -> bool:
    """Whether the mode is on this thread's dispatch stack."""
    return _mode is not None and _mode in _get_current_dispatch_mode_stack()


def on_torch_import() -> None:
    """Called once torch is importable: starts what was asked before."""
    sync(CLIENT)


