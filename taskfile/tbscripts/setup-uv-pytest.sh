#!/bin/bash
# headroom's own setup-uv-pytest.sh, for older terminal-bench tasks that
# name it in test_scripts: the harness put its version beside run-tests.sh,
# and this one does what it does. run-tests.sh sources it from the task's
# working directory (the image's WORKDIR), so the tools stay on PATH for
# run-uv-pytest.sh. Needs the network: apt, astral.sh and PyPI.

# curl, to fetch uv's installer.
apt-get update
apt-get install -y curl

# uv, into ~/.local/bin, and onto PATH.
curl -LsSf https://astral.sh/uv/install.sh | sh
source "$HOME/.local/bin/env"

# uv makes its project in the working directory, which must not be /.
if [ "$PWD" = "/" ]; then
    echo "Error: the working directory is /: set a WORKDIR in the Dockerfile (uv makes its project there)."
    exit 1
fi

# A project with pytest in it.
uv init
uv add pytest
