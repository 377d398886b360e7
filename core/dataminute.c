#include "core/dataminute.h"

#include "core/recording.h"
#include "core/util.h"

int64_t bt_data_minute(const struct bt_config *cfg, int64_t t)
{
    return bt_minute_floor(t - (int64_t)cfg->cw_lag) - 60;
}

int64_t bt_data_minute_shown(const struct bt_config *cfg, int64_t m)
{
    return bt_minute_floor(m) + 60 + (int64_t)cfg->cw_lag;
}

int64_t bt_data_minute_last(const struct bt_config *cfg, int64_t m)
{
    return bt_data_minute_shown(cfg, m) + 59;
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
