/* A recording file (man 5 bedtop-recording), through the reader replay and
 * export use; then the model is evaluated at its start, middle and end as
 * `replay --at` would, so the fuzzed samples and events reach the headroom
 * and report code too. */
#include <string.h>

#include "core/dataminute.h"
#include "core/recording.h"
#include "render/report.h"
#include "core/util.h"
#include "tests/fuzz/fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct bt_replay rp;
    char err[600] = "";
    if (!bt_replay_open_mem(&rp, "fuzz.rec", (const char *)data, size, NULL, NULL, err,
                            sizeof err)) {
        FUZZ_NEED_ERR(false, err);
        return 0;
    }
    if (rp.npolls) {
        /* the data-minute clock over the header's cloudwatch_lag (core/dataminute.c:
         * a lag of 1e300 was an unchecked float-to-integer conversion, issue 37) */
        int64_t first, last, m;
        bt_replay_minutes(&rp, &first, &last);
        (void)bt_replay_minute_instant(&rp, first);
        (void)bt_data_minute_shown(&rp.cfg, last);
        (void)bt_replay_when_minute(&rp, "-1m", &m);
        int64_t at[3] = {rp.start, rp.start + (rp.end - rp.start) / 2, rp.end};
        for (int i = 0; i < 3; i++) {
            bt_replay_seek(&rp, at[i]);
            (void)bt_replay_poll_at(&rp, at[i]);
            struct bt_report rep;
            bt_report_build(&rep, &rp.cfg, &rp.store, at[i]);
            struct bt_buf out = {0};
            bt_report_render(&rep, BT_FMT_JSON, false, &out);
            bt_buf_free(&out);
            bt_report_free(&rep);
        }
    }
    bt_replay_free(&rp);
    return 0;
}
