"""gradlab's lessons: a checked curriculum from derivatives to GPUs.

Each lesson is a folder ``lessons/NN_slug/``:

    lesson.toml   title, minutes, goals, prerequisites, the app panels it uses,
                  and its tasks (name, title, hints)
    lesson.md     the text the student reads
    starter.py    the file the student edits: functions with TODOs, and a
                  ``__main__`` block the app runs under the debugger
    solution.py   the reference answer
    checks.py     one ``@check("task")`` function per task (see lessons.expect)
    figures.py    ``make(folder)`` draws the lesson's pictures with gradlab.viz;
                  the drawn ones ship in figures/

The machinery (no Textual in it, so ``gradlab check`` runs anywhere):

    lessons.catalog    find and read the lessons
    lessons.expect     what checks.py files use: check, expect_close, ...
    lessons.grading    run a lesson's checks on a student's file -> Report
    lessons.workspace  the student's working copies (~/gradlab-lessons)
    lessons.progress   what each student has passed, saved per user
    lessons.cli        ``gradlab lesson`` (the list) and ``gradlab check N``
"""

from .catalog import Lesson, LessonError, Task, all_lessons, get_lesson
from .grading import Report, TaskResult, run_checks

__all__ = ["Lesson", "Task", "LessonError", "all_lessons", "get_lesson", "Report",
           "TaskResult", "run_checks"]
