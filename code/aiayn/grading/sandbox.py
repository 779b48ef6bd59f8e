"""A child process for code the grader does not trust: forked, limited, watched from outside.

``Child(body, limits)`` forks; the child runs ``body(send)`` and exits. ``send`` writes plain
data (str, int, float, bool, None, bytes, and tuples, lists and dicts of them) to a pipe; the
parent reads it with ``receive()``, which unpickles with no class allowed at all, so a message
can never run code in the parent. In the child: its own process group (the parent kills it and
what it started), killed if the parent dies, no stdin, stdout and stderr in an in-memory file
the parent can read (``output()``), an address-space limit, an output-size limit, no core dumps.
``receive()`` returns the next message, or ``Ended`` saying why none will come: the time limit
passed, the process exited or died by a signal, or it sent bytes that are not a message.
"""

from __future__ import annotations

import ctypes
import fcntl
import io
import os
import pickle
import resource
import select
import signal
import sys
import tempfile
import time
import traceback
import warnings
from dataclasses import dataclass

from .language import Text, tr

MAX_MESSAGE = 64 << 20  # bytes; a bigger frame is not a grader's message
_POLL_S = 0.1  # how often a quiet child is checked for having exited
_PR_SET_PDEATHSIG = 1
try:
    _prctl = ctypes.CDLL(None, use_errno=True).prctl  # resolved once, not in every child
except (OSError, AttributeError):  # not Linux: no parent-death signal
    _prctl = None


@dataclass(frozen=True)
class Limits:
    time_s: float = 30.0  # per message: a check that sends nothing for this long is stopped
    memory_bytes: int = 4 << 30  # address space beyond what the parent had mapped at the fork
    output_bytes: int = 16 << 20  # past this, writes to stdout or stderr fail (EFBIG)


@dataclass(frozen=True)
class Ended:
    """The child will send nothing more: ``what`` happened, and a ``hint`` for the reader;
    ``timed_out`` when the parent stopped it at the time limit."""
    what: str
    hint: str
    timed_out: bool = False


_SIGNAL_HINTS = {
    signal.SIGKILL: Text("killed from outside the grader, most often by the system when memory "
                         "runs out", "被评分程序之外的进程杀掉了，最常见的是内存耗尽时被系统杀掉"),
    signal.SIGSEGV: Text("a crash in compiled code, e.g. recursion deeper than the C stack allows "
                         "(a raised sys.setrecursionlimit)",
                         "编译代码崩溃了，例如递归深度超过了 C 栈的容量（调高过 "
                         "sys.setrecursionlimit）"),
    signal.SIGABRT: Text("compiled code aborted (os.abort, or a failed internal assertion)",
                         "编译代码中止了（os.abort，或内部断言失败）"),
}


class _NoClasses(pickle.Unpickler):
    def find_class(self, module, name):
        raise pickle.UnpicklingError(f"refused {module}.{name}: messages hold plain data only")


def _frame(message) -> bytes:
    data = pickle.dumps(message, protocol=5)
    return len(data).to_bytes(8, "big") + data


class Child:
    """One forked process running ``body(send)``; use it as a context manager, so that it is
    killed and its pipe and output file closed whatever happens."""

    def __init__(self, body, limits: Limits):
        self.limits, self.status, self._buffer = limits, None, bytearray()
        self._output = _memory_file()
        read_fd, write_fd = os.pipe()
        for stream in (sys.stdout, sys.stderr):  # else the child could repeat buffered text
            try:
                stream.flush()
            except Exception:
                pass
        with warnings.catch_warnings():  # Python 3.12 warns about fork with threads
            warnings.simplefilter("ignore", DeprecationWarning)
            pid = os.fork()
        if pid == 0:  # the child: never return into the caller's code
            code = 70
            try:
                os.close(read_fd)
                _confine(self._output, write_fd, limits)
                body(lambda message: _write_all(write_fd, _frame(message)))
                code = 0
            except BaseException:
                traceback.print_exc()  # into the output file: shown with the check
            finally:
                os._exit(code)
        os.close(write_fd)
        self.pid, self._read_fd = pid, read_fd
        os.set_blocking(read_fd, False)
        try:  # the child does the same; whichever runs first wins the race harmlessly
            os.setpgid(pid, pid)
        except OSError:
            pass

    def receive(self):
        """The next message, or ``Ended``; waits at most ``limits.time_s``."""
        deadline = time.monotonic() + self.limits.time_s
        while True:
            message = self._take_frame()
            if message is not None:
                return message
            if self._exited():
                self._read_available()  # what it sent just before it exited
                message = self._take_frame()
                return self._ended() if message is None else message
            left = deadline - time.monotonic()
            if left <= 0:
                self.stop()
                time_s = f"{self.limits.time_s:g}"
                return Ended(tr(f"timed out: still running after {time_s} s, so the grader "
                                "stopped it", f"超时：{time_s} 秒后仍在运行，评分程序把它停了下来"),
                             tr("look for a loop that never ends or a call that waits "
                                "(time.sleep, input()); the limit is --time-limit",
                                "找找永不结束的循环或会一直等待的调用（time.sleep、input()）；"
                                "时限由 --time-limit 设定"), True)
            wait_ms = 1000 * min(left, _POLL_S)
            if self._read_fd is None:
                time.sleep(wait_ms / 1000)
            else:
                poller = select.poll()
                poller.register(self._read_fd, select.POLLIN)
                if poller.poll(wait_ms):
                    self._read_available()

    def output(self, limit: int) -> tuple[bytes, int]:
        """(the first ``limit`` bytes, the size of) what the child printed since it last
        emptied its output file: what a check that died or hung printed."""
        return os.pread(self._output, limit, 0), os.fstat(self._output).st_size

    def stop(self) -> None:
        """Kills the child and everything in its process group, and reaps it."""
        for kill in (os.killpg, os.kill):
            try:
                kill(self.pid, signal.SIGKILL)
                break
            except (ProcessLookupError, PermissionError):
                continue
        if self.status is None:
            self.status = os.waitpid(self.pid, 0)[1]

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        self.stop()
        for fd in (self._read_fd, self._output):
            if fd is not None:
                os.close(fd)
        self._read_fd = self._output = None

    def _read_available(self) -> None:
        while self._read_fd is not None and len(self._buffer) <= MAX_MESSAGE + 8:
            try:
                chunk = os.read(self._read_fd, 1 << 16)
            except BlockingIOError:
                return
            if not chunk:  # every writer closed the pipe: nothing more will come
                os.close(self._read_fd)
                self._read_fd = None
                return
            self._buffer += chunk

    def _take_frame(self):
        if len(self._buffer) < 8:
            return None
        size = int.from_bytes(self._buffer[:8], "big")
        if size > MAX_MESSAGE:
            return self._garbage(tr(f"a frame of {size} bytes", f"一个 {size} 字节的数据帧"))
        if len(self._buffer) < 8 + size:
            return None
        data = bytes(self._buffer[8:8 + size])
        del self._buffer[:8 + size]
        try:
            return _NoClasses(io.BytesIO(data)).load()
        except Exception as e:
            return self._garbage(tr(f"{size} bytes that do not unpickle as plain data ({e})",
                                    f"{size} 字节无法还原成普通数据的内容：\n{' ' * 10}{e}"))

    def _garbage(self, what: str) -> Ended:
        self.stop()
        return Ended(tr(f"the process running your code sent {what} instead of a result",
                        f"运行你代码的进程发来的不是结果，而是{what}"),
                     tr("something wrote into the grader's result pipe; only the grader may",
                        "有代码往评分程序的结果管道里写了东西；只有评分程序自己可以写"))

    def _exited(self) -> bool:
        if self.status is None:
            pid, status = os.waitpid(self.pid, os.WNOHANG)
            if pid == 0:
                return False
            self.status = status
        return True

    def _ended(self) -> Ended:
        code = os.waitstatus_to_exitcode(self.status)
        self.stop()
        if code >= 0:
            return Ended(tr(f"the process running your code exited with status {code} before "
                            "the check finished",
                            f"检查还没做完，运行你代码的进程就以状态 {code} 退出了"),
                         tr("an exercise returns its result; something called os._exit(...) or "
                            "exit() in compiled code instead",
                            "练习应当用 return 返回结果；这里却有代码调用了 os._exit(...)，或在编译代码"
                            "里调用了 exit()"))
        number = -code
        try:
            name = signal.Signals(number).name
        except ValueError:
            name = "unknown"
        return Ended(tr(f"the process running your code died with signal {number} ({name})",
                        f"运行你代码的进程被信号 {number}（{name}）终止了"),
                     str(_SIGNAL_HINTS.get(number, Text("the process was stopped from outside",
                                                        "这个进程被外部停止了"))))


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view):]


def _memory_file() -> int:
    """An anonymous file in memory (a temporary file where memfd is missing), append-only so
    that emptying it with ftruncate makes the next write start at 0."""
    if hasattr(os, "memfd_create"):
        fd = os.memfd_create("aiayn-grading-output", os.MFD_CLOEXEC)
    else:
        with tempfile.TemporaryFile() as f:
            fd = os.dup(f.fileno())
    os.set_inheritable(fd, False)
    fcntl.fcntl(fd, fcntl.F_SETFL, fcntl.fcntl(fd, fcntl.F_GETFL) | os.O_APPEND)
    return fd


_output_fd = None  # in the child: the file its stdout and stderr go to
limits_in_force: Limits | None = None  # in the child: its limits, for messages


def take_output(limit: int) -> tuple[bytes, int]:
    """In the child: (the first ``limit`` bytes, the size of) what it printed since the last
    call; empties the file."""
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except Exception:
            pass
    taken = os.pread(_output_fd, limit, 0), os.fstat(_output_fd).st_size
    os.ftruncate(_output_fd, 0)
    return taken


def _confine(output_fd: int, result_fd: int, limits: Limits) -> None:
    """In the child, before any of the reader's code runs."""
    global _output_fd, limits_in_force
    _output_fd, limits_in_force = output_fd, limits
    try:
        os.setpgid(0, 0)
    except OSError:  # the parent already did
        pass
    _die_with_parent()
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)  # input() gets EOFError instead of waiting for a terminal
    os.dup2(output_fd, 1)
    os.dup2(output_fd, 2)
    # Close what it inherited (the terminal behind the parent's stdout, a notebook's sockets):
    # keep only the output file and the result pipe.
    low = 3
    for keep in sorted((output_fd, result_fd)):
        os.closerange(low, keep)
        low = keep + 1
    os.closerange(low, os.sysconf("SC_OPEN_MAX"))
    sys.stdin = open(0, closefd=False)
    sys.stdout, sys.stderr = (io.TextIOWrapper(io.FileIO(fd, "w", closefd=False), "utf-8",
                                               "backslashreplace", write_through=True)
                              for fd in (1, 2))
    signal.signal(signal.SIGINT, signal.default_int_handler)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    _lower_limit(resource.RLIMIT_CORE, 0)
    _lower_limit(resource.RLIMIT_FSIZE, limits.output_bytes)
    _lower_limit(resource.RLIMIT_AS, _mapped_bytes() + limits.memory_bytes)


def _lower_limit(which: int, value: int) -> None:
    soft, hard = resource.getrlimit(which)
    if hard != resource.RLIM_INFINITY:
        value = min(value, hard)
    resource.setrlimit(which, (value, hard))


def _mapped_bytes() -> int:
    try:
        with open("/proc/self/statm") as f:
            return int(f.read().split()[0]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError):
        return 0


def _die_with_parent() -> None:
    """Linux: SIGKILL this process when its parent dies, so no orphan runs on."""
    parent = os.getppid()
    if _prctl is None:
        return
    _prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)
    if os.getppid() != parent:  # the parent died before prctl took effect
        os._exit(70)
