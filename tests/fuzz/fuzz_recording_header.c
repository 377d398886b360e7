/* A recording header (man 5 bedtop-recording): the input is the header line, read
 * member by member (core/recload.c, core/recscan.c) with a fixed poll line after it,
 * then the window and the data-minute clock it sets (core/dataminute.c: its
 * cloudwatch_lag and interval reached an unchecked float-to-integer conversion,
 * issue 37) and one evaluation at each end, as replay --at would. */
#include <stdlib.h>
#include <string.h>

#include "core/dataminute.h"
#include "core/recording.h"
#include "core/util.h"
#include "render/report.h"
#include "tests/fuzz/fuzz.h"

static const char poll_line[] =
    "\n{\"t\":1795946460,\"s\":[[0,1795946400,1795946460,[0,10,1,5000,2,300]]],"
    "\"e\":[{\"t\":1795946430,\"type\":\"marker\",\"text\":\"m\"}]}\n"
    "{\"t\":1795946520,\"s\":[[0,1795946460,1795946520,[0,12]]]}\n";

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    /* one line: a newline in the input ends the header there, as in a file */
    const uint8_t *nl = memchr(data, '\n', size);
    size_t n = nl ? (size_t)(nl - data) : size;
    char *text = malloc(n + sizeof poll_line);
    if (!text)
        return 0;
    memcpy(text, data, n);
    memcpy(text + n, poll_line, sizeof poll_line);
    struct bt_replay rp;
    char err[600] = "";
    bool ok = bt_replay_open_mem(&rp, "fuzz.rec", text, n + sizeof poll_line - 1, NULL, NULL, err,
                                 sizeof err);
    free(text);
    if (!ok) {
        FUZZ_NEED_ERR(false, err);
        return 0;
    }
    int64_t first, last, m;
    bt_replay_minutes(&rp, &first, &last);
    (void)bt_data_minute_shown(&rp.cfg, first);
    (void)bt_data_minute_last(&rp.cfg, last);
    (void)bt_replay_minute_instant(&rp, first);
    (void)bt_replay_when_minute(&rp, "+1m", &m);
    (void)bt_replay_when_minute(&rp, "-0s", &m);
    /* the window is the recording's own polls (the header's created time at most
     * 10 minutes before the first) */
    if (rp.start > rp.end || (rp.npolls && rp.start < rp.polls[0] - 600))
        abort();
    int64_t at[2] = {rp.start, rp.end};
    for (int i = 0; i < 2; i++) {
        bt_replay_seek(&rp, at[i]);
        struct bt_report rep;
        bt_report_build(&rep, &rp.cfg, &rp.store, at[i]);
        struct bt_buf out = {0};
        bt_report_render(&rep, BT_FMT_JSON, false, &out);
        bt_buf_free(&out);
        bt_report_free(&rep);
    }
    bt_replay_free(&rp);
    return 0;
}
