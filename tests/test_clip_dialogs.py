"""Clip-list and export dialogs driven from the main window with mouse and keys under Xvfb."""
import shutil

import av
import pytest

pytest.importorskip("PySide6")

from PySide6.QtCore import Qt, QTimer  # noqa: E402
from PySide6.QtWidgets import QDialogButtonBox, QPushButton  # noqa: E402

from tests.gui_util import main_window  # noqa: E402
from viewer.clips import Clip, ClipList, sidecar_path  # noqa: E402


@pytest.fixture
def run_copy(small_run, tmp_path):
    """The small run in a folder of its own (the clip list is saved beside it)."""
    p = tmp_path / "runs" / "approach.h5"
    p.parent.mkdir()
    shutil.copy(small_run, p)
    return p


@pytest.fixture
def window(qtbot, tmp_path, run_copy):
    return main_window(qtbot, tmp_path / "settings.ini", run_copy, size=(1280, 860), activate=False)


def type_into(qtbot, widget, text):
    widget.setFocus()
    qtbot.keyClick(widget, Qt.Key_A, Qt.ControlModifier)
    qtbot.keyClicks(widget, text)
    qtbot.keyClick(widget, Qt.Key_Tab)


def cell(dlg, r, c):
    return dlg.table.cellWidget(r, c)


def test_clip_list_edit_validate_reorder_save_and_reload(window, qtbot, run_copy, artifacts):
    window.playback.seek_time(1.0)
    assert window.act_clips.isEnabled()
    window.act_clips.trigger()
    dlg = window.clip_dialog
    qtbot.waitExposed(dlg)
    save = dlg.buttons.button(QDialogButtonBox.Save)
    assert dlg.table.rowCount() == 0 and "no intervals" in dlg.message.text()

    qtbot.mouseClick(dlg.add_button, Qt.LeftButton)
    assert dlg.table.rowCount() == 1
    assert cell(dlg, 0, 0).value() == pytest.approx(1.0) and cell(dlg, 0, 1).value() == pytest.approx(3.0)
    type_into(qtbot, cell(dlg, 0, 1), "0.5")            # end before start: message, Save off
    assert "interval 1" in dlg.message.text() and "end must be after start" in dlg.message.text()
    assert not save.isEnabled()
    type_into(qtbot, cell(dlg, 0, 1), "1.5")
    type_into(qtbot, cell(dlg, 0, 3), "Approach")
    assert save.isEnabled() and "1 interval" in dlg.message.text()

    qtbot.mouseClick(dlg.add_button, Qt.LeftButton)
    type_into(qtbot, cell(dlg, 1, 0), "2")
    type_into(qtbot, cell(dlg, 1, 1), "9")               # past T Final of the 6 s run
    assert "outside the run" in dlg.message.text() and not save.isEnabled()
    dlg.grab().save(str(artifacts / "clip_list_dialog_error.png"))
    type_into(qtbot, cell(dlg, 1, 1), "2.5")
    type_into(qtbot, cell(dlg, 1, 2), "0")               # zero speed
    assert "speed must be positive" in dlg.message.text()
    type_into(qtbot, cell(dlg, 1, 2), "0.25")
    type_into(qtbot, cell(dlg, 1, 3), "Impact")
    assert save.isEnabled()

    qtbot.mouseClick(dlg.add_button, Qt.LeftButton)      # a third row, then remove it
    assert dlg.table.rowCount() == 3
    qtbot.mouseClick(dlg.remove_button, Qt.LeftButton)
    assert dlg.table.rowCount() == 2

    dlg.table.selectRow(1)
    qtbot.mouseClick(dlg.up_button, Qt.LeftButton)       # "Impact" first
    assert [c.title for c in dlg.clips()] == ["Impact", "Approach"] and dlg.selected_row() == 0
    qtbot.mouseClick(dlg.down_button, Qt.LeftButton)
    assert [c.title for c in dlg.clips()] == ["Approach", "Impact"]
    # 2 s title + 0.5 s, 2 s title + 0.5 s at 1/4 speed = 6.5 s at 30 fps
    assert "2 intervals: 6.5 s of video (195 frames at 30 fps)" in dlg.message.text()
    dlg.grab().save(str(artifacts / "clip_list_dialog.png"))

    qtbot.mouseClick(save, Qt.LeftButton)
    assert not dlg.isVisible()
    saved = ClipList.load(sidecar_path(run_copy))
    assert saved.clips == [Clip(1.0, 1.5, 1.0, "Approach", 2.0), Clip(2.0, 2.5, 0.25, "Impact", 2.0)]

    window.act_clips.trigger()                           # reopened: the saved list comes back
    dlg2 = window.clip_dialog
    assert dlg2 is not dlg and dlg2.clips() == saved.clips
    assert "loaded approach.clips.json" in dlg2.message.text()
    dlg2.reject()


def test_broken_sidecar_gives_message_not_crash(window, qtbot, run_copy):
    sidecar_path(run_copy).write_text("{ not json")
    window.act_clips.trigger()
    dlg = window.clip_dialog
    assert dlg.table.rowCount() == 0 and "could not read the saved clips" in dlg.message.text()
    assert "approach.clips.json" in dlg.message.text()
    dlg.reject()
    assert window.isVisible()


def _export_dialog(window, qtbot, run_copy, clips, out):
    ClipList(clips, 30, (1280, 720)).save(sidecar_path(run_copy))
    window.act_export.trigger()
    dlg = window.export_dialog
    qtbot.waitExposed(dlg)
    dlg.size_combo.setCurrentIndex(dlg.size_combo.findData("854x480"))
    dlg.fps_spin.setValue(10)
    dlg.output_edit.setText(str(out))
    return dlg


def test_export_dialog_writes_mp4_with_progress(window, qtbot, run_copy, tmp_path, artifacts):
    out = tmp_path / "report.mp4"
    dlg = _export_dialog(window, qtbot, run_copy, [Clip(1.0, 2.0, 1.0, "Capture", 0.5), Clip(2.0, 2.5, 0.5)], out)
    assert "25 frames, 2.5 s of video" in dlg.summary.text() and dlg.export_button.isEnabled()
    dlg.grab().save(str(artifacts / "export_dialog.png"))
    seen = []

    def look():   # the first event-loop turn with frames done (an export may take less than any fixed delay)
        p = dlg.progress
        if p is not None and p.value() > 0 and not seen:
            seen.append((p.isVisible(), p.value(), p.maximum()))
            p.grab().save(str(artifacts / "export_progress.png"))
            watch.stop()

    watch = QTimer()
    watch.timeout.connect(look)
    watch.start(0)
    paths = []
    dlg.exported.connect(paths.append)
    qtbot.mouseClick(dlg.export_button, Qt.LeftButton)
    watch.stop()
    assert paths == [out] and out.exists() and not dlg.isVisible()
    assert seen and seen[0][0] and seen[0][2] == 25
    with av.open(str(out)) as c:
        cc = c.streams.video[0].codec_context
        n = sum(1 for _ in c.decode(video=0))
    assert n == 25 and (cc.width, cc.height) == (854, 480)
    assert "exported" in window.statusBar().currentMessage()


def test_export_cancel_leaves_no_file(window, qtbot, run_copy, tmp_path):
    out = tmp_path / "out" / "long.mp4"
    out.parent.mkdir()
    dlg = _export_dialog(window, qtbot, run_copy, [Clip(0.0, 6.0, 0.25)], out)   # 240 frames at 10 fps

    def press_cancel():
        cancel = dlg.progress.findChild(QPushButton)
        assert cancel.text() == "Cancel"
        qtbot.mouseClick(cancel, Qt.LeftButton)

    QTimer.singleShot(500, press_cancel)
    qtbot.mouseClick(dlg.export_button, Qt.LeftButton)
    assert "cancelled" in dlg.last_error and "long.mp4 was not written" in dlg.summary.text()
    assert list(out.parent.iterdir()) == []
    assert dlg.isVisible() and window.isVisible()
    dlg.reject()


def test_export_dialog_checks_output_and_format(window, qtbot, run_copy, tmp_path):
    dlg = _export_dialog(window, qtbot, run_copy, [Clip(1.0, 1.2)], tmp_path / "nowhere" / "x.mp4")
    assert not dlg.export_button.isEnabled() and "does not exist" in dlg.summary.text()
    dlg.output_edit.setText(str(tmp_path / "x.mp4"))
    assert dlg.export_button.isEnabled()
    dlg.format_combo.setCurrentIndex(dlg.format_combo.findData("gif"))
    assert dlg.output_edit.text().endswith("x.gif")
    dlg.format_combo.setCurrentIndex(dlg.format_combo.findData("png"))
    assert dlg.output_edit.text() == str(tmp_path / "x")
    qtbot.mouseClick(dlg.export_button, Qt.LeftButton)
    assert sorted(p.name for p in (tmp_path / "x").iterdir()) == [f"frame_{i:06d}.png" for i in range(2)]


def test_export_dialog_names_a_bad_output(window, qtbot, run_copy, tmp_path, artifacts):
    """A name the chosen format cannot use, a parent that is a file, a folder of the user's own files: said, and
    Export stays off (nothing written)."""
    (tmp_path / "notes.txt").write_text("a file, not a folder")
    dlg = _export_dialog(window, qtbot, run_copy, [Clip(1.0, 1.2)], tmp_path / "clip.txt")
    type_into(qtbot, dlg.output_edit, str(tmp_path / "clip.txt"))
    assert not dlg.export_button.isEnabled()
    assert "output: format mp4 needs a name ending in .mp4" in dlg.summary.text()
    type_into(qtbot, dlg.output_edit, str(tmp_path / "notes.txt" / "clip.mp4"))
    assert not dlg.export_button.isEnabled() and "notes.txt is a file, not a folder" in dlg.summary.text()
    own = tmp_path / "own"
    own.mkdir()
    (own / "keep.txt").write_text("the user's")
    dlg.format_combo.setCurrentIndex(dlg.format_combo.findData("png"))
    type_into(qtbot, dlg.output_edit, str(own))
    assert not dlg.export_button.isEnabled() and "is a folder holding other files" in dlg.summary.text()
    dlg.grab().save(str(artifacts / "export_dialog_bad_output.png"))
    qtbot.mouseClick(dlg.export_button, Qt.LeftButton)
    assert not (tmp_path / "clip.txt").exists() and not list(tmp_path.glob(".own*"))
    assert [p.name for p in own.iterdir()] == ["keep.txt"]
    dlg.reject()
