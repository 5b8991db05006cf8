"""Model files only from directories the operator names.

``SERVEGATE_MODEL_DIRS`` is a colon-separated list of directories; a container loads a model file
only when the file, with every symbolic link resolved, lies inside one of them (also resolved) or
inside the container's own directory, where its shipped model is. Whoever can start a container
with other environment variables (a ``deploy_model`` call, for one) can then point ``MODEL_PATH``
only at files the operator put there, which matters for formats that can run code when loaded
(pickles). The gateway's process manager never passes ``SERVEGATE_MODEL_DIRS`` through a call's
``env``: it comes from the operator's environment of the gateway.
"""

import os

MODEL_DIRS = "SERVEGATE_MODEL_DIRS"


class ModelPathError(PermissionError):
    """A model file outside the directories a container may load from."""


def allowed_dirs(own_dir):
    """The resolved directories models may come from: ``own_dir`` and those of ``SERVEGATE_MODEL_DIRS``."""
    named = [d for d in os.environ.get(MODEL_DIRS, "").split(os.pathsep) if d.strip()]
    return [os.path.realpath(d) for d in [own_dir] + named]


def model_path(path, own_dir):
    """``path`` resolved (links followed) when it lies in an allowed directory (see the module), else
    ModelPathError naming the file and the directories; FileNotFoundError when it does not exist."""
    resolved = os.path.realpath(path)
    dirs = allowed_dirs(own_dir)
    if not any(os.path.commonpath([resolved, d]) == d for d in dirs):
        raise ModelPathError("refusing to load model file %s%s: it is outside the model directories %s; an operator "
                             "names those in %s (colon-separated)"
                             % (path, " (%s)" % resolved if resolved != os.path.abspath(path) else "",
                                ":".join(dirs), MODEL_DIRS))
    if not os.path.isfile(resolved):
        raise FileNotFoundError("model file %s does not exist" % path)
    return resolved
