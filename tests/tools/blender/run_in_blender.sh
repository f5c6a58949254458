#!/bin/sh
# SPDX-License-Identifier: MIT
# Runs one Blender test script headless: run_in_blender.sh SCRIPT ARGS...
#   blender -b --factory-startup --python-exit-code 1 --python SCRIPT -- ARGS
# Exit 77 (ctest: skipped) with a message when no `blender` is on the PATH (scripts/setup.sh
# installs Debian's). SLANIM_BLENDER names another Blender executable.
blender=${SLANIM_BLENDER:-$(command -v blender)}
if [ -z "$blender" ] || [ ! -x "$blender" ]; then
  echo "skipped: no blender on the PATH (scripts/setup.sh installs Debian's blender; or set SLANIM_BLENDER)"
  exit 77
fi
script=$1
shift
exec "$blender" -b --factory-startup --python-exit-code 1 --python "$script" -- "$@"
