#include "core/dataminute.h"

#include "core/plausible.h"
#include "core/recording.h"
#include "core/util.h"

/* The lag in whole seconds. The config and a recording header both hold it to
 * 0 .. BT_DURATION_MAX; converted through the checked helper all the same, as a
 * recording's 1e300 once reached a bare cast here (undefined behaviour). */
static int64_t lag_s(const struct bt_config *cfg)
{
    return bt_f2i_clamp(cfg->cw_lag, 0, (int64_t)BT_DURATION_MAX);
}

int64_t bt_data_minute(const struct bt_config *cfg, int64_t t)
{
    return bt_minute_floor(t - lag_s(cfg)) - 60;
}

int64_t bt_data_minute_shown(const struct bt_config *cfg, int64_t m)
{
    return bt_minute_floor(m) + 60 + lag_s(cfg);
}

int64_t bt_data_minute_last(const struct bt_config *cfg, int64_t m)
{
    return bt_data_minute_shown(cfg, m) + 59;
}

int64_t bt_data_minute_at(const struct bt_config *cfg, int64_t m, int sec)
{
    return sec < 0 || sec > 59 ? bt_data_minute_last(cfg, m) : bt_data_minute_shown(cfg, m) + sec;
}

void bt_replay_minutes(const struct bt_replay *rp, int64_t *first, int64_t *last)
{
    *first = bt_data_minute(&rp->cfg, rp->start);
    *last = bt_data_minute(&rp->cfg, rp->end);
}

int64_t bt_replay_minute_instant(const struct bt_replay *rp, int64_t m)
{
    int64_t t = bt_data_minute_last(&rp->cfg, m);
    return t < rp->start ? rp->start : t > rp->end ? rp->end : t;
}

bool bt_replay_when_minute(const struct bt_replay *rp, const char *s, int64_t *m)
{
    int64_t first, last, t;
    bt_replay_minutes(rp, &first, &last);
    if (!bt_parse_when(s, first, last, s[0] == '+' ? first : last, &t))
        return false;
    *m = bt_minute_floor(t);
    return true;
}
