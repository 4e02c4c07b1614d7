#!/bin/bash
# Runs in the working directory after workdir/ is copied in, before the agent.
set -euo pipefail
touch setup-ran
rm -- "$0"
