/* bedtop check --state FILE (app/check_state.h). */
#include "app/check_state.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "collectors/cloudwatch.h"
#include "core/json.h"
#include "core/sanitize.h"
#include "core/util.h"
#include "io/file.h"

#define STATE_MAX_BYTES (16u << 20)

static void fnv(uint64_t *h, const char *s)
{
    for (; s && *s; s++)
        *h = (*h ^ (unsigned char)*s) * 1099511628211ull;
    *h = (*h ^ 0xff) * 1099511628211ull; /* a separator: "ab","c" is not "a","bc" */
}

/* Each level of dir made 0700 where it is created (an existing one is left as it is). */
static bool make_dirs(char *dir, bool quiet)
{
    for (char *p = strchr(dir + 1, '/');; p = strchr(p + 1, '/')) {
        if (p)
            *p = '\0';
        if (mkdir(dir, 0700) != 0 && errno != EEXIST) {
            if (!quiet)
                bt_err("check --state: cannot create %s: %s; give --state FILE", dir,
                       strerror(errno));
            return false;
        }
        if (!p)
            return true;
        *p = '/';
    }
}

bool check_state_path(const char *opt, char *out, size_t n)
{
    if (strcmp(opt, "default") != 0) {
        bt_strlcpy(out, opt, n);
        return true;
    }
    char dir[900], base[880];
    if (!bt_xdg_dir("XDG_STATE_HOME", ".local/state", base, sizeof base)) { /* never the cwd */
        bt_err("check --state default: neither XDG_STATE_HOME (an absolute path), HOME nor the "
               "password database names a home directory; give --state FILE");
        return false;
    }
    snprintf(dir, sizeof dir, "%s/bedtop", base);
    if (!make_dirs(dir, false))
        return false;
    snprintf(out, n, "%s/check-state.json", dir);
    return true;
}

bool check_state_default_path(const struct app *a, char *out, size_t n)
{
    char base[880], dir[900], fp[17];
    if (!bt_xdg_dir("XDG_CACHE_HOME", ".cache", base, sizeof base))
        return false; /* no home: the run asks every minute, as --no-state */
    snprintf(dir, sizeof dir, "%s/bedtop", base);
    if (!make_dirs(dir, true))
        return false;
    /* one file per configuration and account: the routes and endpoints, and who the
     * run is (the profile, the access key's ID: hashed, never written out) */
    check_state_fingerprint(&a->cfg, a->ctx.endpoint_url, fp);
    uint64_t h = 14695981039346656037ull;
    fnv(&h, fp);
    fnv(&h, a->ctx.profile);
    fnv(&h, getenv("AWS_PROFILE"));
    fnv(&h, getenv("AWS_ACCESS_KEY_ID"));
    snprintf(out, n, "%s/check-%016llx.json", dir, (unsigned long long)h);
    return true;
}

void check_state_fingerprint(const struct bt_config *cfg, const char *endpoint_url, char out[17])
{
    uint64_t h = 14695981039346656037ull;
    fnv(&h, endpoint_url ? endpoint_url : cfg->endpoint_url);
    fnv(&h, cfg->account);
    for (int r = 0; r < cfg->nroutes; r++) {
        const struct bt_route *rt = &cfg->routes[r];
        fnv(&h, rt->name);
        fnv(&h, rt->model);
        fnv(&h, rt->region);
        fnv(&h, rt->profile);
        fnv(&h, rt->account);
        fnv(&h, rt->project);
        fnv(&h, bt_endpoint_name(rt->endpoint));
    }
    snprintf(out, 17, "%016llx", (unsigned long long)h);
}

/* A time the file may hold: a minute (or second) since 1970, not after now + 5 min. */
static bool state_time(const cJSON *j, int64_t now, bool minute, int64_t *out)
{
    if (!cJSON_IsNumber(j) || !isfinite(j->valuedouble) || j->valuedouble < 0 ||
        j->valuedouble > (double)(now + 300))
        return false;
    *out = (int64_t)j->valuedouble;
    return (double)*out == j->valuedouble && (!minute || *out % 60 == 0);
}

struct loaded {
    int route;
    struct bt_cw_resume res;
};

/* The file's routes, every one checked before any is used; false with why. */
static bool parse_state(struct app *a, const char *text, int64_t now, struct loaded *out,
                        cJSON **root_out, char *why, size_t n)
{
    cJSON *root = cJSON_Parse(text);
    *root_out = root;
    char fp[17];
    check_state_fingerprint(&a->cfg, a->ctx.endpoint_url, fp);
    const char *format = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(root, "format"));
    const cJSON *ver = cJSON_GetObjectItemCaseSensitive(root, "version");
    const char *conf = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(root, "config"));
    const cJSON *routes = cJSON_GetObjectItemCaseSensitive(root, "routes");
    int64_t saved;
    if (!root || !cJSON_IsObject(root))
        return snprintf(why, n, "not JSON (corrupt or truncated)"), false;
    if (!format || strcmp(format, CHECK_STATE_FORMAT) != 0)
        return snprintf(why, n, "not a bedtop check state file"), false;
    if (!cJSON_IsNumber(ver) || ver->valuedouble != CHECK_STATE_VERSION)
        return snprintf(why, n, "state version %g, this bedtop reads %d",
                        cJSON_IsNumber(ver) ? ver->valuedouble : 0, CHECK_STATE_VERSION), false;
    if (!conf || strcmp(conf, fp) != 0)
        return snprintf(why, n, "written for another configuration (routes or endpoints differ)"),
               false;
    if (!state_time(cJSON_GetObjectItemCaseSensitive(root, "saved"), now, false, &saved))
        return snprintf(why, n, "saved in the future or at no valid time (clock moved back?)"),
               false;
    if (!cJSON_IsArray(routes) || cJSON_GetArraySize(routes) != a->cfg.nroutes)
        return snprintf(why, n, "its routes are not this configuration's"), false;
    int i = 0;
    const cJSON *jr;
    cJSON_ArrayForEach(jr, routes) {
        const char *name = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(jr, "name"));
        int r = name ? bt_config_find_route(&a->cfg, name) : -1;
        struct bt_cw_resume *res = &out[i].res;
        const cJSON *seen = cJSON_GetObjectItemCaseSensitive(jr, "seen");
        bool ok = r >= 0 &&
                  state_time(cJSON_GetObjectItemCaseSensitive(jr, "settled"), now, true, &res->settled) &&
                  state_time(cJSON_GetObjectItemCaseSensitive(jr, "settled_detail"), now, true,
                             &res->settled_detail) &&
                  state_time(cJSON_GetObjectItemCaseSensitive(jr, "settled_throttle"), now, true,
                             &res->settled_throttle) &&
                  state_time(cJSON_GetObjectItemCaseSensitive(jr, "detail_at"), now, false,
                             &res->detail_at) &&
                  state_time(cJSON_GetObjectItemCaseSensitive(jr, "listed_at"), now, false,
                             &res->listed_at) &&
                  cJSON_IsNumber(seen) && seen->valuedouble >= 0 && seen->valuedouble < 256 &&
                  seen->valuedouble == (int)seen->valuedouble;
        if (!ok) {
            char s[80];
            return snprintf(why, n, "route %s: a missing or impossible field",
                            name ? bt_san_term(s, sizeof s, name) : "(no name)"),
                   false;
        }
        res->seen = (unsigned)seen->valuedouble;
        out[i].route = r;
        const cJSON *smp;
        cJSON_ArrayForEach(smp, cJSON_GetObjectItemCaseSensitive(jr, "samples")) {
            int64_t t;
            const char *sig = cJSON_GetStringValue(cJSON_GetArrayItem(smp, 1));
            int s = sig ? bt_signal_by_name(sig) : -1;
            const cJSON *v = cJSON_GetArrayItem(smp, 2);
            if (cJSON_GetArraySize(smp) != 3 || !state_time(cJSON_GetArrayItem(smp, 0), now, true, &t) ||
                s < 0 || bt_signal_info[s].source != BT_SRC_CLOUDWATCH ||
                bt_signal_daily((enum bt_signal)s) || !cJSON_IsNumber(v) || !isfinite(v->valuedouble))
                return snprintf(why, n, "route %s: a sample that is not one", a->cfg.routes[r].name),
                       false;
        }
        i++;
    }
    return true;
}

/* A route's covered minutes from the file ([minute, signal mask] pairs; a file
 * without them, or a pair that is not a settled minute of the window: none). */
static void restore_coverage(struct app *a, int r, const cJSON *cov, int64_t now)
{
    const cJSON *c;
    cJSON_ArrayForEach(c, cov) {
        const cJSON *jm = cJSON_GetArrayItem(c, 0), *jb = cJSON_GetArrayItem(c, 1);
        int64_t m;
        if (cJSON_GetArraySize(c) != 2 || !state_time(jm, now, true, &m) ||
            m < now - (CHECK_STATE_MINUTES + 60) * 60 || !cJSON_IsNumber(jb) ||
            !(jb->valuedouble >= 1 && jb->valuedouble < 18446744073709551616.0))
            continue;
        struct bt_coverage cv = {.route = r, .signals = (uint64_t)jb->valuedouble, .from = m,
                                 .to = m + 60, .settled_to = m + 60, .asked = now};
        bt_store_cover(&a->store, &cv, now);
    }
}

bool check_state_load(struct app *a, const char *path, int64_t now)
{
    void *cw = app_find_inst(a, &bt_cloudwatch_collector);
    size_t len = 0;
    bt_cloudwatch_resume_start(cw);
    char *text = cw ? bt_read_regular_file(path, STATE_MAX_BYTES, &len) : NULL;
    if (!text) {
        if (cw && errno != ENOENT)
            bt_err("check --state %s: %s; asking CloudWatch for every minute this run", path,
                   errno == EINVAL ? "not a regular file" : strerror(errno));
        return false; /* none yet: the first run */
    }
    struct loaded *l = bt_xcalloc((size_t)a->cfg.nroutes + 1, sizeof *l);
    cJSON *root = NULL;
    char why[200];
    bool ok = strlen(text) == len && parse_state(a, text, now, l, &root, why, sizeof why);
    if (!ok && strlen(text) != len)
        snprintf(why, sizeof why, "not JSON (a NUL byte: corrupt)");
    if (ok) {
        const cJSON *jr;
        int i = 0;
        cJSON_ArrayForEach(jr, cJSON_GetObjectItemCaseSensitive(root, "routes")) {
            int r = l[i].route;
            bt_cloudwatch_resume_set(cw, r, &l[i].res);
            const cJSON *smp;
            cJSON_ArrayForEach(smp, cJSON_GetObjectItemCaseSensitive(jr, "samples")) {
                struct bt_sample s = {
                    .t = (int64_t)cJSON_GetArrayItem(smp, 0)->valuedouble, .route = r,
                    .signal = (enum bt_signal)bt_signal_by_name(
                        cJSON_GetStringValue(cJSON_GetArrayItem(smp, 1))),
                    .value = cJSON_GetArrayItem(smp, 2)->valuedouble};
                bt_store_add(&a->store, &s, now);
            }
            restore_coverage(a, r, cJSON_GetObjectItemCaseSensitive(jr, "covered"), now);
            i++;
        }
    } else {
        bt_err("check --state %s: %s; asking CloudWatch for every minute this run "
               "(the file is replaced after it)",
               path, why);
    }
    cJSON_Delete(root);
    free(l);
    free(text);
    return ok;
}

bool check_state_save(struct app *a, const char *path, int64_t now)
{
    void *cw = app_find_inst(a, &bt_cloudwatch_collector);
    if (!cw)
        return true;
    char fp[17];
    check_state_fingerprint(&a->cfg, a->ctx.endpoint_url, fp);
    struct bt_buf b = {0};
    bt_buf_printf(&b, "{\"format\":\"%s\",\"version\":%d,\"config\":\"%s\",\"saved\":%lld,\"routes\":[",
                  CHECK_STATE_FORMAT, CHECK_STATE_VERSION, fp, (long long)now);
    int64_t last = bt_minute_floor(now);
    for (int r = 0; r < a->cfg.nroutes; r++) {
        struct bt_cw_resume res;
        bt_cloudwatch_resume_get(cw, r, &res);
        bt_buf_printf(&b, "%s{\"name\":", r ? "," : "");
        bt_buf_json_str(&b, a->cfg.routes[r].name);
        bt_buf_printf(&b, ",\"settled\":%lld,\"settled_detail\":%lld,\"settled_throttle\":%lld,"
                          "\"detail_at\":%lld,\"listed_at\":%lld,\"seen\":%u,\"samples\":[",
                      (long long)res.settled, (long long)res.settled_detail,
                      (long long)res.settled_throttle, (long long)res.detail_at,
                      (long long)res.listed_at, res.seen);
        bool first = true;
        for (int s = 0; s < BT_SIG_COUNT; s++) {
            if (bt_signal_info[s].source != BT_SRC_CLOUDWATCH || bt_signal_daily((enum bt_signal)s))
                continue;
            for (int64_t m = last - CHECK_STATE_MINUTES * 60; m <= last; m += 60) {
                double v = bt_store_at(&a->store, r, (enum bt_signal)s, m);
                if (isnan(v))
                    continue;
                bt_buf_printf(&b, "%s[%lld,\"%s\",%.17g]", first ? "" : ",", (long long)m,
                              bt_signal_info[s].name, v);
                first = false;
            }
        }
        /* the minutes a poll asked once settled, a signal mask a minute: restored, they
         * stay covered (idle where no datapoint came), not unknown, in the next run */
        bt_buf_puts(&b, "],\"covered\":[");
        first = true;
        for (int64_t m = last - CHECK_STATE_MINUTES * 60; m <= last; m += 60) {
            uint64_t mask = 0;
            for (int s = 0; s < BT_SIG_COUNT; s++)
                if (bt_store_covered(&a->store, r, (enum bt_signal)s, m) == BT_COV_SETTLED)
                    mask |= BT_SIG_BIT(s);
            if (!mask)
                continue;
            bt_buf_printf(&b, "%s[%lld,%llu]", first ? "" : ",", (long long)m,
                          (unsigned long long)mask);
            first = false;
        }
        bt_buf_puts(&b, "]}");
    }
    bt_buf_puts(&b, "]}\n");
    /* whole or not at all, 0600: beside it, then renamed over it */
    bool ok = bt_write_private_file(path, b.buf, b.len, false);
    if (!ok)
        bt_err("check --state %s: cannot write it (%s); the next run asks every minute again", path,
               strerror(errno));
    bt_buf_free(&b);
    return ok;
}
