/* Issue 19, "the dashboard and serve write pending samples as a poll at t:0 when
 * they stop or reload": app_free closes the recorder without a flush of its own,
 * and bt_recorder_close wrote what was pending as {"t":0,...}; a replay of that
 * file then started on 1970-01-01 (its first poll). Worked by hand: the recorder
 * opens at T0 (10:00:00), takes one sample arriving at T0+75 (10:01:15) and an
 * event at T0+80; closed with nothing flushed, the file must hold exactly one
 * poll line, at t = T0+80 (the newest time it took), so the replay spans
 * [T0, T0+80], never 0. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/recording.h"
#include "core/util.h"
#include "io/recfile.h"
#include "io/conffile.h"
#include "tests/tap.h"

#define T0 1795946400LL /* 2026-11-29T10:00:00Z */

int main(void)
{
    char dir[] = "/tmp/bt-close-XXXXXX";
    if (!mkdtemp(dir)) {
        OK(false, "mkdtemp");
        return tap_done();
    }
    char path[256];
    snprintf(path, sizeof path, "%s/dash.rec", dir);
    struct bt_config c;
    char err[256] = "";
    bt_config_init(&c);
    int k = bt_config_add_route(&c, "triage");
    bt_strlcpy(c.routes[k].model, "anthropic.claude-3-haiku", sizeof c.routes[k].model);
    bt_config_finish(&c);
    struct bt_store s;
    bt_store_init(&s, 1, 60);
    struct bt_recorder *r = bt_recorder_open(path, &c, "live", T0, err, sizeof err);
    OK(r != NULL, "recorder opens: %s", r ? "" : err);
    if (!r)
        return tap_done();
    bt_recorder_attach(r, &s);
    struct bt_sample smp = {.t = T0, .route = 0, .signal = BT_SIG_INPUT_TOKENS, .value = 1234};
    bt_store_add(&s, &smp, T0 + 75);
    struct bt_event ev = {.t = T0 + 80, .type = BT_EV_OK, .route = 0,
                          .source = BT_SRC_CLOUDWATCH};
    bt_store_event(&s, &ev);
    bt_recorder_close(r); /* as app_free does when the dashboard quits or serve reloads */
    bt_store_free(&s);

    FILE *f = fopen(path, "r");
    char line[4096];
    int polls = 0;
    bool zero = false;
    while (f && fgets(line, sizeof line, f))
        if (strncmp(line, "{\"t\":", 5) == 0) {
            polls++;
            zero = zero || strncmp(line, "{\"t\":0,", 7) == 0;
        }
    if (f)
        fclose(f);
    OK(polls == 1, "one poll line for what was pending (got %d)", polls);
    OK(!zero, "no poll at t:0");

    struct bt_replay rp;
    OK(bt_replay_open(&rp, path, NULL, NULL, err, sizeof err), "replay opens: %s", err);
    OK(rp.start == T0, "replay starts at the recording's start, 10:00:00 (got %lld)",
       (long long)rp.start);
    OK(rp.npolls == 1 && rp.polls[0] == T0 + 80,
       "the pending line is a poll at 10:01:20, the newest time taken (got %lld)",
       rp.npolls ? (long long)rp.polls[0] : -1LL);
    OK(bt_store_at(&rp.store, 0, BT_SIG_INPUT_TOKENS, T0) == 1234, "its sample replays");
    bt_replay_free(&rp);

    /* a file written before the fix: its closing line at t:0 still brings its
     * sample (arrived 10:01:15), but its 0 is no poll time: the replay spans
     * [10:00:00, 10:01:00], not from 1970 */
    const char *old =
        "{\"format\":\"bedtop-recording\",\"version\":\"1.2\",\"created\":\"2026-11-29T10:00:00Z\","
        "\"signals\":[\"input_tokens\"],\"routes\":[{\"name\":\"triage\",\"model\":\"m\"}]}\n"
        "{\"t\":1795946460,\"s\":[],\"e\":[]}\n"
        "{\"t\":0,\"s\":[[0,1795946400,1795946475,[0,1234]]],\"e\":[]}\n";
    OK(bt_replay_open_mem(&rp, "old.rec", old, strlen(old), NULL, NULL, err, sizeof err),
       "a pre-2.0 file with a t:0 line opens: %s", err);
    OK(rp.start == T0 && rp.npolls == 1 && rp.end == T0 + 60,
       "its t:0 line is no poll: start 10:00:00, end 10:01:00 (got %lld..%lld, %zu polls)",
       (long long)rp.start, (long long)rp.end, rp.npolls);
    bt_store_set_horizon(&rp.store, rp.cfg.routes, rp.base, 0); /* 0: everything visible */
    OK(bt_store_at(&rp.store, 0, BT_SIG_INPUT_TOKENS, T0) == 1234,
       "its sample is still read (1,234 input tokens at 10:00)");
    bt_replay_free(&rp);
    bt_config_free(&c);
    unlink(path);
    rmdir(dir);
    return tap_done();
}
