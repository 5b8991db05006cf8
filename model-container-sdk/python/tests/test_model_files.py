"""Model files only from the container's own directory or those SERVEGATE_MODEL_DIRS names, judged
after resolving links."""

import os

import pytest

from servegate import ModelPathError, model_path


@pytest.fixture
def dirs(tmp_path, monkeypatch):
    own, named, other = (tmp_path / d for d in ("own", "named", "other"))
    for d in (own, named, other):
        d.mkdir()
        (d / "model.bin").write_bytes(b"m")
    monkeypatch.setenv("SERVEGATE_MODEL_DIRS", "%s:%s" % (tmp_path / "absent", named))
    return own, named, other


def test_files_in_the_own_and_named_directories_load(dirs):
    own, named, _ = dirs
    assert model_path(str(own / "model.bin"), str(own)) == os.path.realpath(own / "model.bin")
    assert model_path(str(named / "model.bin"), str(own)) == os.path.realpath(named / "model.bin")
    assert model_path(str(named / ".." / "named" / "model.bin"), str(own)) == os.path.realpath(named / "model.bin")


def test_files_elsewhere_are_refused_also_through_links_and_dot_dots(dirs, tmp_path):
    own, named, other = dirs
    for path in (other / "model.bin", named / ".." / "other" / "model.bin"):
        with pytest.raises(ModelPathError, match="outside the model directories"):
            model_path(str(path), str(own))
    (named / "link.bin").symlink_to(other / "model.bin")
    with pytest.raises(ModelPathError, match="link.bin \\(%s\\)" % os.path.realpath(other / "model.bin")):
        model_path(str(named / "link.bin"), str(own))
    sibling = tmp_path / "named2"  # starts with the allowed directory's name, but is not inside it
    sibling.mkdir()
    (sibling / "model.bin").write_bytes(b"m")
    with pytest.raises(ModelPathError):
        model_path(str(sibling / "model.bin"), str(own))
    with pytest.raises(FileNotFoundError):
        model_path(str(named / "missing.bin"), str(own))
