/* Short labels and figures as the dashboard prints them. */
#include "tui/view.h"

#include <math.h>
#include <stdio.h>

#include "core/format.h"

/* Ages as core/format prints them, in ten-second steps below two minutes and
 * "<10s" below ten: an idle screen over a slow link changes once in ten seconds. */
void tui_fmt_age(int64_t s, char *o, size_t n)
{
    if (s < 0)
        s = 0;
    if (s < 10)
        snprintf(o, n, "<10s");
    else
        bt_fmt_age((double)(s < 120 ? s / 10 * 10 : s), o, n);
}

const char *tui_status_label(enum bt_status s)
{
    switch (s) {
    case BT_ST_OK: return "OK";
    case BT_ST_WARN: return "WARN";
    case BT_ST_CRIT: return "CRIT";
    default: return "UNKN";
    }
}

enum bt_role tui_status_role(enum bt_status s)
{
    switch (s) {
    case BT_ST_OK: return BT_ROLE_OK;
    case BT_ST_WARN: return BT_ROLE_WARN;
    case BT_ST_CRIT: return BT_ROLE_CRIT;
    default: return BT_ROLE_UNKNOWN;
    }
}

enum bt_role tui_sev_role(enum bt_status s)
{
    return s == BT_ST_OK ? BT_ROLE_INFO : tui_status_role(s);
}

const char *tui_sev_label(enum bt_status s)
{
    return s == BT_ST_OK ? "INFO" : tui_status_label(s);
}

bool tui_estimate_only(const struct bt_eval *e)
{
    return bt_eval_has(e, BT_W_ESTIMATE_ONLY);
}

