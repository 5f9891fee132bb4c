#!/bin/sh
# What the local provider needs at run time (bubblewrap, nsenter, script, mkfs.ext4, mkfs.xfs for the
# disk pool, and gcc to build the sandbox init): `scripts/start.sh` runs this so a fresh machine gets a working local
# provider. Same steps as CI's.
exec sh "$(dirname "$0")/ci-setup.sh"
