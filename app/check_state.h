/* bedtop check --state FILE: what a run fetched from CloudWatch (the last minutes'
 * samples and their coverage, each tier's newest settled minute, the last ListMetrics), so a check
 * from cron asks only the minutes it has not seen, the 5-minute tier every 5
 * minutes and ListMetrics every 6 hours. JSON, mode 0600, replaced whole. */
#ifndef BEDTOP_CHECK_STATE_H
#define BEDTOP_CHECK_STATE_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "app/app.h"

#define CHECK_STATE_FORMAT "bedtop-check-state"
#define CHECK_STATE_VERSION 1
#define CHECK_STATE_MINUTES 15   /* samples kept: the minutes a check evaluates and more */

/* The file --state names: "default" is $XDG_STATE_HOME/bedtop/check-state.json (else
 * ~/.local/state/bedtop/...), its directory created 0700. False with a message when
 * there is no home to put it in. */
bool check_state_path(const char *opt, char *out, size_t n);
/* Without --state or --no-state: $XDG_CACHE_HOME/bedtop/check-HASH.json (else
 * ~/.cache/bedtop/...), one file per configuration and account (the fingerprint
 * below, the profile and the access key's ID, hashed), its directories made 0700, so
 * a check from cron pays what serve pays. False (nothing said) when there is no home
 * or the directory cannot be made: the run then asks every minute. */
bool check_state_default_path(const struct app *a, char *out, size_t n);
/* Before the poll: the file's samples into the store and its settled minutes into the
 * CloudWatch collector. A missing file is a first run (nothing said); a corrupt one,
 * another configuration's or another version's: one line on stderr saying so, then
 * every minute is asked, as without a state file. Returns whether it was used. */
bool check_state_load(struct app *a, const char *path, int64_t now);
/* After the poll: this run's state, written beside path and renamed over it. */
bool check_state_save(struct app *a, const char *path, int64_t now);
/* The configuration a state file belongs to (routes, Regions, accounts, endpoints),
 * as 16 hex digits. */
void check_state_fingerprint(const struct bt_config *cfg, const char *endpoint_url, char out[17]);
#endif
