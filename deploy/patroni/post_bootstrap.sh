#!/bin/sh
# Patroni's post_bootstrap (patroni.yml): run once, on the node that creates the cluster,
# right after initdb and before any other node copies it.  Creates the service's role
# and database; the migration (`gin-rummy db upgrade`) then creates the tables.
#
# $1 is the superuser's connection string (over the Unix socket).  Patroni sets
# PGOPTIONS=-c synchronous_commit=local: there is no standby yet to wait for.
# The password comes from GIN_RUMMY_DB_PASSWORD (not a PATRONI_* variable: Patroni
# removes those from the environment it passes on).  psql's \getenv reads it, so it
# never appears on a command line.
set -eu

if [ -z "${GIN_RUMMY_DB_PASSWORD:-}" ]; then
    echo "post_bootstrap: GIN_RUMMY_DB_PASSWORD is not set" >&2
    exit 1
fi

# If this fails, Patroni sets the new data directory aside and exits, and the next
# attempt (any node's) starts from a fresh initdb: the statements need not be
# idempotent.  CREATE DATABASE cannot run in a transaction: psql sends each statement
# on its own.
psql --no-psqlrc --quiet -v ON_ERROR_STOP=1 --dbname="$1" <<'SQL'
\getenv password GIN_RUMMY_DB_PASSWORD
CREATE ROLE gin_rummy LOGIN PASSWORD :'password';
CREATE DATABASE gin_rummy OWNER gin_rummy;
SQL
