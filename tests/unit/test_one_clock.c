/* The one clock, fourth pass (issue 34, core/dataminute.h and core/frame.c), by hand
 * with the 120 s lag: the moment --demo-at names, and the admission scrape a data
 * minute is evaluated with (the detail graphs file a reading under it). */
#include <math.h>
#include <string.h>

#include "core/config.h"
#include "core/dataminute.h"
#include "core/headroom.h"
#include "core/model.h"
#include "tests/tap.h"

#define T0 1795946400 /* 2026-11-29 10:00:00 UTC */
#define M(x) (T0 + (x) * 60)

static void gauge(struct bt_store *st, int64_t t, double v)
{
    struct bt_sample s = {.t = t, .route = 0, .signal = BT_SIG_ADM_IN_FLIGHT, .value = v};
    bt_store_add(st, &s, t);
}

int main(void)
{
    struct bt_config cfg;
    bt_config_defaults(&cfg); /* lag 120 s, interval 60 s */

    /* data minute 10:16 is the newest from 10:16 + 60 s + 120 s = 10:19:00 to 10:19:59 */
    OK(bt_data_minute_at(&cfg, M(16), -1) == M(19) + 59, "--demo-at 16: 10:19:59, its last second");
    OK(bt_data_minute_at(&cfg, M(16), 30) == M(19) + 30, "--demo-at 16.5: 10:19:30");
    OK(bt_data_minute_at(&cfg, M(5), 6) == M(8) + 6, "--demo-at 5.1: 10:08:06");
    OK(bt_data_minute(&cfg, bt_data_minute_at(&cfg, M(16), -1)) == M(16) &&
           bt_data_minute(&cfg, bt_data_minute_at(&cfg, M(16), 0)) == M(16),
       "every moment of its showing has data minute 10:16");
    OK(bt_data_minute_at(&cfg, M(16), -1) == bt_data_minute_last(&cfg, M(16)),
       "the moment replay --at 10:16 shows (bt_data_minute_last)");

    /* admission in-flight scrapes at 10:13:00 (12 calls), 10:16:15 (42) and 10:17:00 (30) */
    struct bt_store st;
    bt_store_init(&st, 1, 1440);
    gauge(&st, M(13), 12);
    gauge(&st, M(16) + 15, 42);
    gauge(&st, M(17), 30);
    /* data minute 10:13 is evaluated from 10:16:00 to 10:16:59: with the scrape of
     * clock minute 10:16 (42), not with the scrape of clock minute 10:13 (12) */
    int64_t am = bt_data_minute_admission(&cfg, &st, 0, M(13), M(16) + 59);
    OK(am == M(16) && bt_store_at(&st, 0, BT_SIG_ADM_IN_FLIGHT, am) == 42,
       "data minute 10:13 at 10:16:59: the scrape of 10:16, 42 in flight");
    OK(bt_eval_adm_minute(&st, 0, M(16) + 59) == am, "... the minute an evaluation at 10:16:59 reads");
    /* seen later (the graph at 10:20): still the scrape of its own showing */
    OK(bt_data_minute_admission(&cfg, &st, 0, M(13), M(20)) == M(16),
       "data minute 10:13 seen from 10:20: the scrape of 10:16 still");
    OK(bt_data_minute_admission(&cfg, &st, 0, M(14), M(20)) == M(17),
       "data minute 10:14: the scrape of 10:17 (30)");
    /* 10:10 was shown 10:13:00 .. 10:13:59: the scrape of 10:13 (12) */
    OK(bt_data_minute_admission(&cfg, &st, 0, M(10), M(20)) == M(13), "data minute 10:10: the scrape of 10:13");
    /* 10:11 and 10:12 were shown at 10:14 and 10:15, when nothing was scraped; the
     * scrape one poll interval before is allowed (an evaluation then read it): 10:11
     * takes 10:13's, 10:12 none (10:13 is more than an interval before 10:15) */
    OK(bt_data_minute_admission(&cfg, &st, 0, M(11), M(20)) == M(13), "data minute 10:11: 10:13's, an interval back");
    OK(bt_data_minute_admission(&cfg, &st, 0, M(12), M(20)) == 0, "data minute 10:12: none (a gap, not 10:13's)");
    /* a data minute not yet shown at now is evaluated with nothing */
    OK(bt_data_minute_admission(&cfg, &st, 0, M(14), M(16) + 59) == 0, "data minute 10:14 at 10:16:59: none yet");
    bt_store_free(&st);
    bt_config_free(&cfg);
    return tap_done();
}
