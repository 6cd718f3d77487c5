"""lessons.catalog: lesson.toml is read and validated; errors name the file and the field."""

from __future__ import annotations

import os
import re

import pytest

from lessons.catalog import PANELS, Lesson, LessonError, Task, all_lessons, get_lesson, read_lesson
from tests.lessons.fakes import LESSON_TOML, write_lesson


def _toml(old: str, new: str) -> str:
    """The fake lesson.toml with one piece replaced (the piece must be there)."""
    assert old in LESSON_TOML
    return LESSON_TOML.replace(old, new)


def test_a_valid_lesson_is_read_into_its_fields(tmp_path):
    folder = write_lesson(tmp_path, "07_adding_up", toml=_toml(
        'title = "Adding and doubling"', 'title = "  Adding and doubling  "\nrequires = ["cuda"]'
    ).replace("prerequisites = []", "prerequisites = [1, 2]"))
    lesson = read_lesson(folder)
    assert isinstance(lesson, Lesson)
    assert (lesson.number, lesson.slug, lesson.name) == (7, "adding_up", "07_adding_up")
    assert lesson.title == "Adding and doubling"
    assert lesson.minutes == 10
    assert lesson.goals == ("add two numbers", "double an array")
    assert lesson.prerequisites == (1, 2)
    assert lesson.panels == ("graph", "log")
    assert lesson.requires == ("cuda",)
    assert lesson.tasks == (
        Task("add", "Add two numbers", ("Use +.", "return a + b")),
        Task("double", "Double an array",
             ("Multiply by 2.", "return 2 * x", "Really: return 2 * x")))
    assert lesson.task("double").title == "Double an array"
    assert lesson.text() == "# Lesson 1 · Fake\n"
    assert lesson.starter == folder / "starter.py"
    assert lesson.solution == folder / "solution.py"
    assert lesson.checks_file == folder / "checks.py"
    assert lesson.figures_file == folder / "figures.py"
    assert lesson.figures_dir == folder / "figures"
    assert lesson.text_file == folder / "lesson.md"
    assert str(lesson) == " 7  Adding and doubling"


def test_optional_fields_default_to_empty(tmp_path):
    toml = _toml("prerequisites = []\n", "").replace('hints = ["Use +.", "return a + b"]\n', "")
    lesson = read_lesson(write_lesson(tmp_path, toml=toml))
    assert lesson.prerequisites == () and lesson.requires == ()
    assert lesson.task("add").hints == ()


def test_every_panel_is_allowed(tmp_path):
    panels = ", ".join(f'"{p}"' for p in PANELS)
    lesson = read_lesson(write_lesson(tmp_path, toml=_toml('["graph", "log"]', f"[{panels}]")))
    assert lesson.panels == PANELS


def test_asking_for_a_task_that_is_not_there(tmp_path):
    lesson = read_lesson(write_lesson(tmp_path))
    with pytest.raises(LessonError, match="lesson 1 has no task 'triple'; its tasks are add, "
                                          "double"):
        lesson.task("triple")


@pytest.mark.parametrize("name", ["3_short", "003_long", "03-dash", "03_Upper", "03_", "ab_cd",
                                  "03_with space"])
def test_a_folder_must_be_named_nn_slug(tmp_path, name):
    with pytest.raises(LessonError, match="a lesson folder is named NN_slug"):
        read_lesson(write_lesson(tmp_path, name))


@pytest.mark.parametrize("missing", ["lesson.toml", "lesson.md", "starter.py", "solution.py",
                                     "checks.py", "figures.py"])
def test_each_missing_file_is_named(tmp_path, missing):
    folder = write_lesson(tmp_path)
    (folder / missing).unlink()
    with pytest.raises(LessonError, match=rf"01_fake: missing {re.escape(missing)}; a lesson has"):
        read_lesson(folder)


def test_a_folder_named_like_a_file_does_not_count(tmp_path):
    folder = write_lesson(tmp_path)
    (folder / "checks.py").unlink()
    (folder / "checks.py").mkdir()
    with pytest.raises(LessonError, match="missing checks.py"):
        read_lesson(folder)


def test_toml_that_does_not_parse(tmp_path):
    folder = write_lesson(tmp_path, toml=_toml("minutes = 10", "minutes = = 10"))
    with pytest.raises(LessonError, match=r"01_fake/lesson\.toml: not valid TOML"):
        read_lesson(folder)


BAD_FIELDS = [
    ("minutes = 10", "minutes = 10\nauthor = \"me\"", r"unknown fields \['author'\]"),
    ('title = "Adding and doubling"', "", r"title = \"\.\.\.\" is missing"),
    ('title = "Adding and doubling"', 'title = "   "', r"title = \"\.\.\.\" is missing"),
    ('title = "Adding and doubling"', "title = 3", r"title = \"\.\.\.\" is missing"),
    ("minutes = 10", "", "minutes must be a whole number from 5 to 60, got None"),
    ("minutes = 10", "minutes = 4", "minutes must be a whole number from 5 to 60, got 4"),
    ("minutes = 10", "minutes = 61", "got 61"),
    ("minutes = 10", "minutes = 10.5", "got 10.5"),
    ("minutes = 10", 'minutes = "10"', "got '10'"),
    ("prerequisites = []", "prerequisites = 1", "prerequisites must be a list of lesson numbers"),
    ("prerequisites = []", "prerequisites = [0]", r"lesson numbers, got \[0\]"),
    ("prerequisites = []", 'prerequisites = ["1"]', r"lesson numbers, got \['1'\]"),
    ("prerequisites = []", "prerequisites = [true]", r"lesson numbers, got \[True\]"),
    ('panels = ["graph", "log"]', "", "panels must be a list of non-empty strings, got None"),
    ('panels = ["graph", "log"]', "panels = []", r"panels must name some of graph, .*got \[\]"),
    ('panels = ["graph", "log"]', 'panels = ["graph", "plots"]',
     r"panels must name some of graph, inspector, memory, optimizer, training, time, log; got "
     r"\['graph', 'plots'\]"),
    ('panels = ["graph", "log"]', 'panels = "graph"', "panels must be a list of non-empty"),
    ('panels = ["graph", "log"]', 'panels = ["graph", ""]', "panels must be a list of non-empty"),
    ("minutes = 10", 'minutes = 10\nrequires = ["tpu"]', r"requires may name cuda; got \['tpu'\]"),
    ("minutes = 10", 'minutes = 10\nrequires = "cuda"', "requires must be a list of non-empty"),
    ('goals = ["add two numbers", "double an array"]', "",
     "goals must be a list of non-empty strings, got None"),
    ('goals = ["add two numbers", "double an array"]', "goals = []",
     "goals must list at least one thing the lesson teaches"),
    ('goals = ["add two numbers", "double an array"]', "goals = [1]",
     r"goals must be a list of non-empty strings, got \[1\]"),
]


@pytest.mark.parametrize(("old", "new", "match"), BAD_FIELDS)
def test_each_bad_field_is_named(tmp_path, old, new, match):
    with pytest.raises(LessonError, match=match) as error:
        read_lesson(write_lesson(tmp_path, toml=_toml(old, new)))
    assert str(error.value).startswith(str(tmp_path / "01_fake" / "lesson.toml") + ":")


ONE_TASK = '''\
title = "T"
minutes = 10
goals = ["g"]
panels = ["graph"]
'''

BAD_TASKS = [
    ("", r"a lesson needs at least one \[\[tasks\]\] table"),
    ("tasks = []", r"a lesson needs at least one \[\[tasks\]\] table"),
    ('tasks = "add"', r"a lesson needs at least one \[\[tasks\]\] table"),
    ('[[tasks]]\ntitle = "Add"', r"task 1 needs name = \"\.\.\.\" and title = \"\.\.\.\""),
    ('[[tasks]]\nname = "add"', r"task 1 needs name = \"\.\.\.\" and title"),
    ('[[tasks]]\nname = "a"\ntitle = "A"\n[[tasks]]\nname = 2\ntitle = "B"', "task 2 needs name"),
    ('[[tasks]]\nname = "two words"\ntitle = "A"',
     "task name 'two words' must be a Python identifier"),
    ('[[tasks]]\nname = "add"\ntitle = "A"\n[[tasks]]\nname = "add"\ntitle = "B"',
     "two tasks are named 'add'"),
    ('[[tasks]]\nname = "add"\ntitle = "A"\nhint = "typo"',
     r"task 'add' has unknown fields \['hint'\]; a task has name, title and hints"),
    ('[[tasks]]\nname = "add"\ntitle = "A"\nhints = "one"',
     "task 'add' hints must be a list of non-empty strings, got 'one'"),
    ('[[tasks]]\nname = "add"\ntitle = "A"\nhints = ["ok", ""]',
     "task 'add' hints must be a list of non-empty strings"),
]


@pytest.mark.parametrize(("tasks", "match"), BAD_TASKS)
def test_each_bad_task_is_named(tmp_path, tasks, match):
    with pytest.raises(LessonError, match=match):
        read_lesson(write_lesson(tmp_path, toml=ONE_TASK + tasks + "\n"))


def test_a_minimal_lesson_reads(tmp_path):
    lesson = read_lesson(write_lesson(tmp_path, toml=ONE_TASK + '[[tasks]]\nname = "a"\ntitle = '
                                                                '"A"\n'))
    assert [t.name for t in lesson.tasks] == ["a"]
    assert lesson.goals == ("g",) and lesson.panels == ("graph",)


# --- all_lessons and get_lesson ------------------------------------------------------------
@pytest.fixture
def root(tmp_path):
    """Three lessons (1, 3, 12), plus things that are not lessons."""
    root = tmp_path / "lessons"
    write_lesson(root, "12_last_one")
    write_lesson(root, "03_backprop_by_hand")
    write_lesson(root, "01_fake")
    (root / "__pycache__").mkdir()
    (root / "README.md").write_text("not a lesson")
    (root / "99_a_file.py").write_text("not a folder")
    (root / "notes").mkdir()
    return root


def test_all_lessons_are_found_in_order(root):
    lessons = all_lessons(root)
    assert [lesson.name for lesson in lessons] == ["01_fake", "03_backprop_by_hand",
                                                   "12_last_one"]
    assert [lesson.number for lesson in lessons] == [1, 3, 12]
    assert all_lessons(str(root)) == lessons


@pytest.mark.parametrize("key", [3, "3", "03", " 3 ", "03_backprop_by_hand", "backprop_by_hand"])
def test_get_lesson_by_number_or_name(root, key):
    assert get_lesson(key, root).name == "03_backprop_by_hand"


def test_get_lesson_twelve(root):
    assert get_lesson(12, root).slug == "last_one"
    assert get_lesson("12", root) is get_lesson("last_one", root)


@pytest.mark.parametrize(("key", "shown"), [(2, "2"), ("99", "'99'"), ("backprop", "'backprop'"),
                                            (-1, "-1")])
def test_an_unknown_lesson_says_which_there_are(root, key, shown):
    with pytest.raises(LessonError, match=rf"there is no lesson {shown}: the lessons are numbered "
                                          r"1 to 12 \(gradlab lesson lists them\)"):
        get_lesson(key, root)


def test_no_lessons_at_all(tmp_path):
    with pytest.raises(LessonError, match="no lessons found in"):
        get_lesson(1, tmp_path)


def test_a_missing_folder_of_lessons(tmp_path):
    with pytest.raises(LessonError, match="no such folder of lessons"):
        all_lessons(tmp_path / "nowhere")


def test_two_folders_with_one_number(tmp_path):
    write_lesson(tmp_path, "02_one")
    write_lesson(tmp_path, "02_other")
    write_lesson(tmp_path, "04_fine")
    write_lesson(tmp_path, "04_twice")
    with pytest.raises(LessonError, match=r"two lesson folders share the number\(s\) \[2, 4\]"):
        all_lessons(tmp_path)


def test_get_lesson_with_two_folders_of_its_number(tmp_path):
    write_lesson(tmp_path, "02_one")
    write_lesson(tmp_path, "02_other")
    write_lesson(tmp_path, "03_fine")
    with pytest.raises(LessonError, match="two lesson folders share the number 2: 02_one, "
                                          "02_other"):
        get_lesson(2, tmp_path)
    assert get_lesson("02_other", tmp_path).name == "02_other"  # a full name is unambiguous
    assert get_lesson(3, tmp_path).name == "03_fine"


def test_one_broken_lesson_does_not_hide_the_others(tmp_path):
    write_lesson(tmp_path, "01_fine")
    (write_lesson(tmp_path, "02_broken") / "solution.py").unlink()
    with pytest.raises(LessonError, match="02_broken: missing solution.py"):
        all_lessons(tmp_path)
    assert get_lesson(1, tmp_path).name == "01_fine"
    with pytest.raises(LessonError, match="02_broken: missing solution.py"):
        get_lesson(2, tmp_path)


def test_an_edited_lesson_toml_is_read_again(tmp_path):
    folder = write_lesson(tmp_path)
    assert get_lesson(1, tmp_path).title == "Adding and doubling"
    toml = folder / "lesson.toml"
    toml.write_text(_toml("Adding and doubling", "Adding, then doubling"))
    stat = toml.stat()
    os.utime(toml, ns=(stat.st_atime_ns, stat.st_mtime_ns + 10**9))  # a later save
    assert get_lesson(1, tmp_path).title == "Adding, then doubling"
    assert all_lessons(tmp_path)[0].title == "Adding, then doubling"


def test_the_real_lesson_one_reads():
    """The template lesson itself validates (read alone: the others are not needed)."""
    from lessons.catalog import LESSONS_DIR

    lesson = read_lesson(LESSONS_DIR / "01_derivative_as_slope")
    assert lesson.number == 1
    assert [t.name for t in lesson.tasks] == ["central_difference", "autograd_slope",
                                              "tangent_line"]
