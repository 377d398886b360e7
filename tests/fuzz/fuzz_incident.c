/* report incident over a recording (man 5 bedtop-recording): the reader, then the
 * incident's evaluation minute by minute, its report.md and its charts' data and
 * SVG, all in memory (bedtop report incident writes them to -o DIR). The window is
 * the recording's own polls (issue 37: a header "created" in 1970 walked every
 * minute since), so an input far larger in time than in bytes cannot make it slow.
 * fuzz-smoke-runs: 1500 */
#include <stdlib.h>
#include <string.h>

#include "core/dataminute.h"
#include "core/recording.h"
#include "core/reportcalc.h"
#include "core/util.h"
#include "render/chart.h"
#include "render/reportdoc.h"
#include "tests/fuzz/fuzz.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);

/* cairo's fontconfig keeps its caches for the process: released at exit (before the
 * leak check, which runs after the handlers registered later than it) */
int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    atexit(bt_chart_shutdown);
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct bt_replay rp;
    char err[600] = "";
    if (!bt_replay_open_mem(&rp, "fuzz.rec", (const char *)data, size, NULL, NULL, err,
                            sizeof err)) {
        FUZZ_NEED_ERR(false, err);
        return 0;
    }
    if (!rp.npolls) {
        bt_replay_free(&rp);
        return 0;
    }
    int64_t from = bt_data_minute(&rp.cfg, rp.start), to = bt_data_minute(&rp.cfg, rp.end);
    /* the reader bounds the window to 16 days of polls: 23,041 minutes at most */
    if (to - from > (int64_t)16 * 86400 + 3600 + 600)
        abort();
    struct bt_incident inc = {0};
    bt_incident_build(&rp, from, to, NULL, &inc);
    struct bt_buf md = {0};
    bt_incident_render_md(&inc, &rp, false, &md);
    bt_buf_free(&md);
    for (int k = 0; k < BT_CHART_COUNT; k++) {
        struct bt_chart c;
        bt_inc_chart_build(&inc, &rp.cfg, (enum bt_inc_chart)k, &c);
        if (k == 0) { /* one chart through cairo: the others draw the same way */
            struct bt_buf img = {0};
            char cerr[256] = "";
            (void)bt_chart_svg(&c, &img, cerr, sizeof cerr);
            bt_buf_free(&img);
        }
        bt_chart_free(&c);
    }
    bt_incident_free(&inc);
    bt_replay_free(&rp);
    return 0;
}
