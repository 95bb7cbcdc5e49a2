"""Every write a publication makes, counted; a fault at any one of them.

:class:`WritePoints` wraps the functions through which
:func:`ppdm.release.publish.publish_directory` (and the audit log it appends
to) changes the file system: ``os.open`` with write flags, ``os.write``,
``os.fsync``, ``os.rename``, ``os.replace``, ``os.truncate``, ``os.mkdir``,
``os.chmod``, ``os.fchmod``, ``shutil.copyfile``, ``tempfile.mkstemp``,
``tempfile.mkdtemp``, ``os.fdopen`` (and the ``write`` of the file it returns)
and ``open`` with a writing mode. A wrapped call made inside another one (the
``open`` inside ``shutil.copyfile``, the ``mkdir`` inside ``mkdtemp``) is
part of that one point, not a point of its own.

Counting (``fail_at=None``) records ``(function, path)`` of each point in
order. With ``fail_at=i`` the i-th point (0-based) fails instead of running:

- ``action="raise"`` raises ``OSError(ENOSPC)`` (or ``code``) naming the
  path; a write (``os.write``, a file's ``write``, ``shutil.copyfile``)
  first writes half its bytes, as a disk that fills up mid-way does;
- ``action="kill"`` sends this process SIGKILL, after the same half write.

An audit hook (:func:`sys.addaudithook`) sees every file-system change the
interpreter makes, wrapped or not; :attr:`WritePoints.unwrapped` lists those
made outside any wrapped call, which means a write this module misses.

Run as a script, it is the publishing process of the SIGKILL tests::

    python publish_fault_points.py ARGS.pickle ROOT I [I ...]

For each point I it forks a child that publishes the pickled
``publish_directory`` arguments into ``ROOT/<I>/out`` and kills itself at
point I; the child first writes the point it fired at (one JSON line) to a
pipe. One JSON line per point is printed: the point, the child's wait
status and the point fired. Forking after one import keeps each case at a
few milliseconds instead of a fresh interpreter's second and a half.
"""

from __future__ import annotations

import builtins
import errno
import io
import json
import os
import pickle
import shutil
import signal
import sys
import tempfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

WRITE_FLAGS = os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_TRUNC | os.O_APPEND

#: Audit events that change the file system (``open`` only with write flags).
CHANGING_EVENTS = {
    "os.rename",
    "os.mkdir",
    "os.chmod",
    "os.truncate",
    "os.remove",
    "os.rmdir",
    "os.link",
    "os.symlink",
    "os.chown",
    "os.utime",
    "shutil.copyfile",
    "shutil.copymode",
    "shutil.copystat",
    "tempfile.mkstemp",
    "tempfile.mkdtemp",
}

_ACTIVE: WritePoints | None = None
_HOOKED = False


def _audit(event: str, args: tuple[Any, ...]) -> None:
    points = _ACTIVE
    if points is None or points._depth:
        return
    if event == "open":
        path, mode, flags = args
        writing = (
            flags & WRITE_FLAGS if mode is None else any(c in str(mode) for c in "wax+")
        )
        if not writing:
            return
    elif event not in CHANGING_EVENTS:
        return
    points.unwrapped.append((event, repr(args[:2])))


def _fd_path(fd: int) -> str:
    try:
        return os.readlink(f"/proc/self/fd/{fd}")
    except OSError:
        return f"<fd {fd}>"


class _CountedFile:
    """A file object from ``os.fdopen`` whose ``write`` is a point."""

    def __init__(self, points: WritePoints, handle: Any) -> None:
        self._points = points
        self._handle = handle

    def write(self, data: bytes) -> int:
        handle = self._handle

        def half() -> None:
            handle.write(data[: len(data) // 2])
            handle.flush()

        return self._points._point(
            "file.write", _fd_path(handle.fileno()), lambda: handle.write(data), half
        )

    def __getattr__(self, name: str) -> Any:
        return getattr(self._handle, name)

    def __enter__(self) -> _CountedFile:
        return self

    def __exit__(self, *exc: object) -> None:
        self._handle.close()


class WritePoints:
    """Count the write points of a publication, or fail at one of them.

    Parameters
    ----------
    fail_at : int or None
        Index of the point that fails; None only counts.
    action : {"raise", "kill"}
        Raise ``OSError(code)`` or SIGKILL this process at ``fail_at``.
    on_fire : callable, optional
        Called with ``(index, function, path)`` just before the fault.
    code : int
        The errno raised (``action="raise"``).
    """

    def __init__(
        self,
        fail_at: int | None = None,
        action: str = "raise",
        on_fire: Callable[[int, str, str], None] | None = None,
        code: int = errno.ENOSPC,
    ) -> None:
        self.fail_at = fail_at
        self.action = action
        self.on_fire = on_fire
        self.code = code
        self.calls: list[tuple[str, str]] = []
        self.fired: tuple[int, str, str] | None = None
        self.unwrapped: list[tuple[str, str]] = []
        self._depth = 0
        self._real: dict[tuple[Any, str], Any] = {}

    # -- one point ------------------------------------------------------------
    def _point(
        self,
        name: str,
        path: str,
        run: Callable[[], Any],
        half: Callable[[], None] | None = None,
        path2: str | None = None,
    ) -> Any:
        if self._depth:  # inside another point: part of it
            return run()
        index = len(self.calls)
        self.calls.append((name, path))
        self._depth += 1
        try:
            if index == self.fail_at:
                self.fired = (index, name, path)
                if half is not None:
                    half()
                if self.on_fire is not None:
                    self.on_fire(index, name, path)
                if self.action == "kill":
                    os.kill(os.getpid(), signal.SIGKILL)
                raise OSError(self.code, os.strerror(self.code), path, None, path2)
            return run()
        finally:
            self._depth -= 1

    # -- the wrappers -----------------------------------------------------------
    def _wrappers(self) -> dict[tuple[Any, str], Callable[..., Any]]:
        real = self._real

        def open_(path: Any, flags: int, *args: Any, **kwargs: Any) -> int:
            call = real[os, "open"]
            if not flags & WRITE_FLAGS:
                return call(path, flags, *args, **kwargs)
            return self._point(
                "os.open", str(path), lambda: call(path, flags, *args, **kwargs)
            )

        def write(fd: int, data: bytes) -> int:
            call = real[os, "write"]
            return self._point(
                "os.write",
                _fd_path(fd),
                lambda: call(fd, data),
                lambda: _write_all(call, fd, bytes(data)[: len(data) // 2]),
            )

        def fsync(fd: Any) -> None:
            call = real[os, "fsync"]
            number = fd if isinstance(fd, int) else fd.fileno()
            return self._point("os.fsync", _fd_path(number), lambda: call(fd))

        def renamer(name: str) -> Callable[..., None]:
            def rename(src: Any, dst: Any, *args: Any, **kwargs: Any) -> None:
                call = real[os, name]
                return self._point(
                    f"os.{name}",
                    f"{src} -> {dst}",
                    lambda: call(src, dst, *args, **kwargs),
                    path2=str(dst),
                )

            return rename

        def truncate(path: Any, length: int) -> None:
            call = real[os, "truncate"]
            return self._point("os.truncate", str(path), lambda: call(path, length))

        def mkdir(path: Any, *args: Any, **kwargs: Any) -> None:
            call = real[os, "mkdir"]
            return self._point(
                "os.mkdir", str(path), lambda: call(path, *args, **kwargs)
            )

        def chmod(path: Any, *args: Any, **kwargs: Any) -> None:
            call = real[os, "chmod"]
            return self._point(
                "os.chmod", str(path), lambda: call(path, *args, **kwargs)
            )

        def fchmod(fd: int, mode: int) -> None:
            call = real[os, "fchmod"]
            return self._point("os.fchmod", _fd_path(fd), lambda: call(fd, mode))

        def copyfile(src: Any, dst: Any, *args: Any, **kwargs: Any) -> Any:
            call = real[shutil, "copyfile"]

            def half() -> None:
                data = Path(src).read_bytes()
                with real[builtins, "open"](dst, "wb") as target:
                    target.write(data[: len(data) // 2])

            return self._point(
                "shutil.copyfile",
                str(dst),
                lambda: call(src, dst, *args, **kwargs),
                half,
            )

        def mkstemp(*args: Any, **kwargs: Any) -> tuple[int, str]:
            call = real[tempfile, "mkstemp"]
            where = kwargs.get("dir", args[2] if len(args) > 2 else None)
            return self._point(
                "tempfile.mkstemp", str(where), lambda: call(*args, **kwargs)
            )

        def mkdtemp(*args: Any, **kwargs: Any) -> str:
            call = real[tempfile, "mkdtemp"]
            where = kwargs.get("dir", args[2] if len(args) > 2 else None)
            return self._point(
                "tempfile.mkdtemp", str(where), lambda: call(*args, **kwargs)
            )

        def fdopen(fd: int, *args: Any, **kwargs: Any) -> Any:
            call = real[os, "fdopen"]
            handle = self._point(
                "os.fdopen", _fd_path(fd), lambda: call(fd, *args, **kwargs)
            )
            return _CountedFile(self, handle)

        def opener(owner: Any) -> Callable[..., Any]:
            def open_file(file: Any, mode: str = "r", *args: Any, **kwargs: Any) -> Any:
                call = real[owner, "open"]
                if isinstance(file, int) or not any(c in mode for c in "wax+"):
                    return call(file, mode, *args, **kwargs)
                return self._point(
                    "open", str(file), lambda: call(file, mode, *args, **kwargs)
                )

            return open_file

        return {
            (os, "open"): open_,
            (os, "write"): write,
            (os, "fsync"): fsync,
            (os, "rename"): renamer("rename"),
            (os, "replace"): renamer("replace"),
            (os, "truncate"): truncate,
            (os, "mkdir"): mkdir,
            (os, "chmod"): chmod,
            (os, "fchmod"): fchmod,
            (os, "fdopen"): fdopen,
            (shutil, "copyfile"): copyfile,
            (tempfile, "mkstemp"): mkstemp,
            (tempfile, "mkdtemp"): mkdtemp,
            (builtins, "open"): opener(builtins),
            (io, "open"): opener(io),
        }

    @contextmanager
    def installed(self) -> Iterator[WritePoints]:
        """Wrap the functions (and watch the audit events) inside the block."""
        global _ACTIVE, _HOOKED
        if not _HOOKED:
            sys.addaudithook(_audit)  # hooks cannot be removed: gated by _ACTIVE
            _HOOKED = True
        self._real = {key: getattr(*key) for key in self._wrappers()}
        wrappers = self._wrappers()
        for (owner, name), wrapper in wrappers.items():
            setattr(owner, name, wrapper)
        _ACTIVE = self
        try:
            yield self
        finally:
            _ACTIVE = None
            for (owner, name), function in self._real.items():
                setattr(owner, name, function)


def _write_all(write: Callable[[int, bytes], int], fd: int, data: bytes) -> None:
    while data:
        data = data[write(fd, data) :]


def normalized(calls: list[tuple[str, str]], out_dir: Path) -> list[tuple[str, str]]:
    """``calls`` with ``out_dir`` as ``<out>`` and random name parts as ``*``."""
    import re

    # staging: .staging-<release id>-<publisher pid>-<random>; the manifest and
    # the page are written atomically through a temporary name of their own
    random_part = re.compile(
        r"(\.staging-[0-9a-f]+-|\.manifest\.json\.|\.report\.html\.)"
        r"(?:[0-9]+-)?[a-z0-9_]+"
    )
    return [
        (name, random_part.sub(r"\1*", path.replace(str(out_dir), "<out>")))
        for name, path in calls
    ]


def rebased(args: tuple[Any, ...], out_dir: Path) -> tuple[Any, ...]:
    """``publish_directory`` arguments publishing into ``out_dir`` instead."""
    old_out, release_dir, *rest = args
    return (out_dir, out_dir / release_dir.relative_to(old_out), *rest)


def _publish_and_die(args: tuple[Any, ...], out_dir: Path, point: int) -> None:
    from ppdm.release.publish import publish_directory

    report_r, report_w = os.pipe()
    pid = os.fork()
    if pid == 0:  # the publishing process
        os.close(report_r)

        def tell(index: int, name: str, path: str) -> None:
            line = json.dumps({"index": index, "function": name, "path": path})
            os.write(report_w, (line + "\n").encode())

        try:
            with WritePoints(point, "kill", on_fire=tell).installed():
                publish_directory(*rebased(args, out_dir))
        except BaseException:
            os._exit(1)
        os._exit(0)  # the point was never reached
    os.close(report_w)
    with os.fdopen(report_r, "rb") as report:
        told = report.read().decode()
    _, status = os.waitpid(pid, 0)
    fired = json.loads(told) if told.strip() else None
    print(
        json.dumps(
            {
                "point": point,
                "signal": os.WTERMSIG(status) if os.WIFSIGNALED(status) else None,
                "exit": os.WEXITSTATUS(status) if os.WIFEXITED(status) else None,
                "fired": fired,
            }
        ),
        flush=True,
    )


def main(argv: list[str]) -> int:
    args_file, root, *points = argv
    args = pickle.loads(Path(args_file).read_bytes())
    for point in map(int, points):
        _publish_and_die(args, Path(root) / str(point) / "out", point)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
