"""The student's working copies: one editable file per lesson, outside the source tree.

``gradlab lesson 3`` copies ``lessons/03_.../starter.py`` to
``~/gradlab-lessons/03_backprop_by_hand.py`` the first time (set
``GRADLAB_LESSONS_DIR`` to put them elsewhere) and never overwrites it after:
the student's work is theirs. A reset moves the old copy into ``backups/``
before it puts the starter back, so nothing is lost.
"""

from __future__ import annotations

import os
import shutil
import tempfile
import time
from pathlib import Path

from .catalog import Lesson

__all__ = ["WORKSPACE_ENV", "workspace_dir", "working_copy", "ensure_working_copy",
           "reset_working_copy", "write_atomically"]

WORKSPACE_ENV = "GRADLAB_LESSONS_DIR"


def workspace_dir() -> Path:
    """Where the working copies live: ``$GRADLAB_LESSONS_DIR`` or ``~/gradlab-lessons``."""
    return Path(os.environ.get(WORKSPACE_ENV) or Path.home() / "gradlab-lessons").expanduser()


def working_copy(lesson: Lesson) -> Path:
    """The student's file for ``lesson`` (it may not exist yet)."""
    return workspace_dir() / f"{lesson.name}.py"


def write_atomically(path: Path, data: bytes) -> None:
    """Write ``data`` to ``path`` through a temporary file and a rename: a crash midway
    leaves the old file whole."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as out:
            out.write(data)
        # mkstemp makes the file private (0600); give it the permissions a new file gets.
        os.chmod(tmp, 0o666 & ~_umask())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def _umask() -> int:
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def ensure_working_copy(lesson: Lesson) -> Path:
    """The working copy, made from the starter if the student has none yet."""
    path = working_copy(lesson)
    if not path.exists():
        write_atomically(path, lesson.starter.read_bytes())
    return path


def reset_working_copy(lesson: Lesson) -> Path | None:
    """Put the starter back; the old copy goes to ``backups/`` (its path is returned)."""
    path = working_copy(lesson)
    backup = None
    if path.exists():
        stamp = time.strftime("%Y%m%d-%H%M%S")
        backup = path.parent / "backups" / f"{path.stem}.{stamp}.py"
        backup.parent.mkdir(parents=True, exist_ok=True)
        k = 1
        while backup.exists():
            backup = backup.with_name(f"{path.stem}.{stamp}-{k}.py")
            k += 1
        shutil.copy2(path, backup)
    write_atomically(path, lesson.starter.read_bytes())
    return backup
