"""The list of lessons, with the student's progress: Enter opens one."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import Screen
from textual.widgets import DataTable, Footer, Static

from lessons import progress
from lessons.catalog import LessonError, all_lessons
from lessons.workspace import workspace_dir

__all__ = ["LessonListScreen", "STATE_WORDS"]

STATE_WORDS = {"done": "✓ done", "started": "… started", "new": ""}


class LessonListScreen(Screen):
    """Every lesson: state, number, title, minutes, tasks passed."""

    AUTO_FOCUS = "#lesson-table"
    BINDINGS = [
        Binding("enter", "open", "Open", show=False),
        Binding("escape", "back", "Back"),
    ]

    def compose(self) -> ComposeResult:
        with Vertical(id="lesson-list"):
            yield Static("[b]Lessons[/b] · from a derivative to a GPU", id="lessons-title")
            yield DataTable(id="lesson-table", cursor_type="row", zebra_stripes=True)
            yield Static("", id="lessons-footnote")
        yield Footer()

    def on_mount(self) -> None:
        table = self.query_one("#lesson-table", DataTable)
        table.add_columns("", "#", "lesson", "min", "tasks")
        try:
            lessons = all_lessons()
        except LessonError as error:
            self.query_one("#lessons-footnote", Static).update(f"[$error]{error}[/]")
            return
        saved = progress.load()
        for lesson in lessons:
            state = progress.state(lesson, saved)
            table.add_row(STATE_WORDS[state], str(lesson.number), lesson.title,
                          str(lesson.minutes),
                          f"{progress.passed_tasks(lesson, saved)}/{len(lesson.tasks)}",
                          key=str(lesson.number))
        first_open = next((k for k, lesson in enumerate(lessons)
                           if progress.state(lesson, saved) != "done"), 0)
        table.move_cursor(row=first_open)
        done = sum(progress.state(lesson, saved) == "done" for lesson in lessons)
        self.query_one("#lessons-footnote", Static).update(
            f"{done} of {len(lessons)} done · Enter opens a lesson · your files are in "
            f"{workspace_dir()}")

    def on_data_table_row_selected(self, event: DataTable.RowSelected) -> None:
        self.app.open_lesson(int(event.row_key.value))

    def action_open(self) -> None:
        table = self.query_one("#lesson-table", DataTable)
        if table.row_count:
            key = table.coordinate_to_cell_key(table.cursor_coordinate).row_key
            self.app.open_lesson(int(key.value))

    def action_back(self) -> None:
        self.app.pop_screen()
