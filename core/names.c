/* The model's names (core/names.h): the signal table and the names of sources,
 * endpoints, inference types, quota sources, kinds and matches and of settings, with
 * their lookups by name; the quota sources' precedence. A leaf of the store: it
 * reads nothing of the rest. */
#include "core/names.h"

#include <string.h>

#include "core/util.h"

#define BT_SIG_INFO(id, name, metric, stat, mantle, src) \
    [BT_SIG_##id] = {name, metric, stat, mantle, BT_SRC_##src},
const struct bt_signal_info bt_signal_info[BT_SIG_COUNT] = {BT_SIGNALS(BT_SIG_INFO)};
#undef BT_SIG_INFO

int bt_signal_by_name(const char *name)
{
    for (int i = 0; i < BT_SIG_COUNT; i++)
        if (strcmp(bt_signal_info[i].name, name) == 0)
            return i;
    return -1;
}

bool bt_signal_daily(enum bt_signal s)
{
    return s == BT_SIG_DAY_INPUT_TOKENS || s == BT_SIG_DAY_OUTPUT_TOKENS || s == BT_SIG_DAY_CACHE_WRITE ||
           s == BT_SIG_DAY_CACHE_READ;
}

enum bt_signal bt_signal_daily_minute(enum bt_signal daily)
{
    return daily == BT_SIG_DAY_OUTPUT_TOKENS ? BT_SIG_OUTPUT_TOKENS
           : daily == BT_SIG_DAY_CACHE_WRITE ? BT_SIG_CACHE_WRITE
           : daily == BT_SIG_DAY_CACHE_READ  ? BT_SIG_CACHE_READ
                                             : BT_SIG_INPUT_TOKENS;
}

bool bt_signal_tier(enum bt_signal s)
{
    return s == BT_SIG_TIER_RES_INVOCATIONS || s == BT_SIG_TIER_RES_INPUT || s == BT_SIG_TIER_RES_OUTPUT;
}

const char *bt_source_name(enum bt_source s)
{
    static const char *const names[] = {"cloudwatch", "quotas", "admission"};
    return (unsigned)s < BT_ARRAY_LEN(names) ? names[s] : "?";
}

const char *bt_endpoint_name(enum bt_endpoint e)
{
    return e == BT_EP_MANTLE ? "mantle" : "runtime";
}

const char *bt_inference_name(enum bt_inference i)
{
    static const char *const names[] = {"on-demand", "cross-region", "global",
                                        "latency-optimized", "provisioned"};
    return (unsigned)i < BT_ARRAY_LEN(names) ? names[i] : "?";
}

int bt_inference_by_name(const char *name)
{
    for (int i = 0; i < BT_INF_COUNT; i++)
        if (name && !strcmp(name, bt_inference_name((enum bt_inference)i)))
            return i;
    return -1;
}

static const char *const match_names[] = {NULL, "usage-metric", "code", "name", "config"};

const char *bt_quota_match_name(enum bt_quota_match m)
{
    return (unsigned)m < BT_ARRAY_LEN(match_names) ? match_names[m] : NULL;
}

int bt_quota_match_by_name(const char *name)
{
    for (size_t i = 1; name && i < BT_ARRAY_LEN(match_names); i++)
        if (!strcmp(name, match_names[i]))
            return (int)i;
    return -1;
}

const char *bt_quota_source_name(enum bt_quota_source s)
{
    static const char *const names[] = {"unknown", "service-quotas", "config", "default"};
    return (unsigned)s < BT_ARRAY_LEN(names) ? names[s] : "?";
}

const char *bt_quota_kind_name(enum bt_quota_kind k)
{
    static const char *const names[] = {"tpm", "rpm", "tpd", "input_tpm", "output_tpm",
                                        "reserved_input_tpm", "reserved_output_tpm",
                                        "tpd_account", "concurrent"};
    return (unsigned)k < BT_ARRAY_LEN(names) ? names[k] : "?";
}

/* Precedence of quota sources: config beats the account's applied value,
 * which beats a published default. */
int bt_quota_rank(enum bt_quota_source q)
{
    switch (q) {
    case BT_QS_CONFIG: return 3;
    case BT_QS_SERVICE_QUOTAS: return 2;
    case BT_QS_DEFAULT: return 1;
    default: return 0;
    }
}

const char *bt_setting_name(enum bt_setting k)
{
    static const char *const names[] = {"max_tokens", "burndown", "base_model", "inference",
                                        "identity", "lifecycle", "profile"};
    return (unsigned)k < BT_ARRAY_LEN(names) ? names[k] : "?";
}

int bt_setting_by_name(const char *name)
{
    for (int k = 0; name && k < BT_SET_COUNT; k++)
        if (!strcmp(bt_setting_name((enum bt_setting)k), name))
            return k;
    return -1;
}

bool bt_setting_is_number(enum bt_setting k)
{
    return k == BT_SET_MAX_TOKENS || k == BT_SET_BURNDOWN;
}
