#include "core/recording.h"

#include <cjson/cJSON.h>
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/json.h"
#include "core/util.h"

/* ---- writing ---- */

struct bt_recorder {
    int fd;
    char path[512];
    struct bt_buf line;        /* samples of the line being built */
    struct bt_buf events;
    int nsamples, nevents;
    /* the group being built: samples of one route, minute and arrival */
    int g_route;
    int64_t g_minute, g_arrival;
    bool g_open;
    unsigned long lines, dropped;
    char error[256];
    off_t good;                /* file size after the last complete line */
    bool torn;                 /* a failed write may have left part of a line after it */
};

static cJSON *route_json(const struct bt_route *r)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "name", r->name);
    cJSON_AddStringToObject(o, "model", r->model);
    if (r->base_model[0])
        cJSON_AddStringToObject(o, "base_model", r->base_model);
    cJSON_AddStringToObject(o, "region", r->region);
    if (r->profile[0])
        cJSON_AddStringToObject(o, "profile", r->profile);
    if (r->project[0])
        cJSON_AddStringToObject(o, "project", r->project);
    if (r->base_model[0])
        cJSON_AddStringToObject(o, "base_model", r->base_model);
    if (r->account[0])
        cJSON_AddStringToObject(o, "account", r->account);
    if (r->context[0])
        cJSON_AddStringToObject(o, "context", r->context);
    cJSON_AddStringToObject(o, "endpoint", bt_endpoint_name(r->endpoint));
    cJSON_AddStringToObject(o, "inference", bt_inference_name(r->inference));
    cJSON_AddStringToObject(o, "priority", r->priority == BT_PRIO_OFFLINE ? "offline" : "online");
    if (!isnan(r->max_tokens))
        cJSON_AddNumberToObject(o, "max_tokens", r->max_tokens);
    if (!isnan(r->concurrency_limit))
        cJSON_AddNumberToObject(o, "concurrency_limit", r->concurrency_limit);
    cJSON_AddNumberToObject(o, "burndown", r->burndown);
    cJSON_AddStringToObject(o, "burndown_source", r->burndown_source);
    if (r->burndown_row[0])
        cJSON_AddStringToObject(o, "burndown_row", r->burndown_row);
    if (r->legacy_seen)
        cJSON_AddBoolToObject(o, "legacy", true);
    if (r->quota_code[0])
        cJSON_AddStringToObject(o, "quota_code", r->quota_code);
    /* whether counters were configured, never the URL (it may carry credentials) */
    cJSON_AddBoolToObject(o, "admission", r->admission[0] != '\0');
    cJSON *q = cJSON_AddObjectToObject(o, "quotas");
    for (int k = 0; k < BT_Q_COUNT; k++) {
        const struct bt_quota *qq = &r->quota[k];
        if (isnan(qq->value))
            continue;
        cJSON *x = cJSON_AddObjectToObject(q, bt_quota_kind_name(k));
        cJSON_AddNumberToObject(x, "value", qq->value);
        cJSON_AddStringToObject(x, "source", bt_quota_source_name(qq->source));
        if (bt_quota_match_name(r->quota_match[k]))
            cJSON_AddStringToObject(x, "matched_by", bt_quota_match_name(r->quota_match[k]));
        if (qq->code[0])
            cJSON_AddStringToObject(x, "code", qq->code);
        if (qq->name[0])
            cJSON_AddStringToObject(x, "name", qq->name);
    }
    return o;
}

static void threshold_str(const struct bt_threshold *t, char *out, size_t n)
{
    snprintf(out, n, "%g%s", t->value, t->pct ? "%" : "");
}

static char *header_json(const struct bt_config *cfg, const char *mode, int64_t now)
{
    cJSON *h = cJSON_CreateObject();
    char iso[32], buf[32];
    cJSON_AddStringToObject(h, "format", BT_REC_FORMAT);
    snprintf(buf, sizeof buf, "%d.%d", BT_REC_MAJOR, BT_REC_MINOR);
    cJSON_AddStringToObject(h, "version", buf);
    bt_fmt_iso(now, iso, sizeof iso);
    cJSON_AddStringToObject(h, "created", iso);
    cJSON_AddStringToObject(h, "created_by", "bedtop " BEDTOP_VERSION);
    cJSON_AddStringToObject(h, "mode", mode);
    cJSON *sig = cJSON_AddArrayToObject(h, "signals");
    for (int i = 0; i < BT_SIG_COUNT; i++)
        cJSON_AddItemToArray(sig, cJSON_CreateString(bt_signal_info[i].name));
    cJSON *c = cJSON_AddObjectToObject(h, "config");
    cJSON_AddNumberToObject(c, "interval", cfg->interval);
    cJSON_AddNumberToObject(c, "cloudwatch_lag", cfg->cw_lag);
    threshold_str(&cfg->warn, buf, sizeof buf);
    cJSON_AddStringToObject(c, "warn_headroom", buf);
    threshold_str(&cfg->crit, buf, sizeof buf);
    cJSON_AddStringToObject(c, "crit_headroom", buf);
    cJSON_AddNumberToObject(c, "daily_warn", cfg->daily_warn_pct);
    cJSON_AddNumberToObject(c, "daily_crit", cfg->daily_crit_pct);
    cJSON_AddNumberToObject(c, "oversize_factor", cfg->oversize_factor);
    cJSON_AddNumberToObject(c, "oversize_margin", cfg->oversize_margin);
    cJSON_AddNumberToObject(c, "retry_share", cfg->retry_share);
    cJSON_AddNumberToObject(c, "history_minutes", cfg->history_minutes);
    cJSON *routes = cJSON_AddArrayToObject(h, "routes");
    for (int i = 0; i < cfg->nroutes; i++)
        cJSON_AddItemToArray(routes, route_json(&cfg->routes[i]));
    char *s = bt_json_print(h, false);
    cJSON_Delete(h);
    return s;
}

static bool write_all(int fd, const char *p, size_t n)
{
    while (n) {
        ssize_t w = write(fd, p, n);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return false;
        p += w;
        n -= (size_t)w;
    }
    return true;
}

struct bt_recorder *bt_recorder_open(const char *path, const struct bt_config *cfg,
                                     const char *mode, int64_t now, char *err, size_t errlen)
{
    char *h = header_json(cfg, mode, now); /* first: out of memory leaves no file */
    int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_APPEND | O_CLOEXEC, 0600);
    if (fd < 0) {
        snprintf(err, errlen, "%s: %s%s", path, strerror(errno),
                 errno == EEXIST ? " (recordings are never overwritten: choose a new name)" : "");
        cJSON_free(h);
        return NULL;
    }
    struct bt_recorder *r = bt_xcalloc(1, sizeof *r);
    r->fd = fd;
    bt_strlcpy(r->path, path, sizeof r->path);
    bool ok = write_all(fd, h, strlen(h)) && write_all(fd, "\n", 1);
    r->good = (off_t)strlen(h) + 1;
    cJSON_free(h);
    if (!ok) {
        snprintf(err, errlen, "%s: %s", path, strerror(errno));
        close(fd);
        unlink(path);
        free(r);
        return NULL;
    }
    return r;
}

static void close_group(struct bt_recorder *r)
{
    if (r->g_open)
        bt_buf_puts(&r->line, "]]");
    r->g_open = false;
}

static void on_sample(void *arg, const struct bt_sample *smp, int64_t arrival)
{
    struct bt_recorder *r = arg;
    int64_t minute = bt_minute_floor(smp->t);
    if (!r->g_open || r->g_route != smp->route || r->g_minute != minute ||
        r->g_arrival != arrival) {
        close_group(r);
        bt_buf_printf(&r->line, "%s[%d,%lld,%lld,[", r->nsamples ? "," : "", smp->route,
                      (long long)minute, (long long)arrival);
        r->g_open = true;
        r->g_route = smp->route;
        r->g_minute = minute;
        r->g_arrival = arrival;
    } else {
        bt_buf_putc(&r->line, ',');
    }
    /* full double precision, in the fewest digits that read back exactly */
    char num[32];
    snprintf(num, sizeof num, "%.15g", smp->value);
    if (strtod(num, NULL) != smp->value)
        snprintf(num, sizeof num, "%.17g", smp->value);
    bt_buf_printf(&r->line, "%d,%s", (int)smp->signal, num);
    r->nsamples++;
}

static const char *const ev_names[] = {"error", "ok", "quota", "marker", "info"};

static void on_event(void *arg, const struct bt_event *ev)
{
    struct bt_recorder *r = arg;
    cJSON *o = cJSON_CreateObject();
    cJSON_AddNumberToObject(o, "t", (double)ev->t);
    cJSON_AddStringToObject(o, "type", ev_names[ev->type]);
    cJSON_AddNumberToObject(o, "route", ev->route);
    cJSON_AddStringToObject(o, "source", bt_source_name(ev->source));
    if (ev->type == BT_EV_QUOTA) {
        cJSON_AddStringToObject(o, "kind", bt_quota_kind_name(ev->quota_kind));
        cJSON_AddNumberToObject(o, "value", ev->value);
        cJSON_AddStringToObject(o, "quota_source", bt_quota_source_name(ev->quota_source));
        if (bt_quota_match_name(ev->matched_by))
            cJSON_AddStringToObject(o, "matched_by", bt_quota_match_name(ev->matched_by));
    }
    if (ev->code[0])
        cJSON_AddStringToObject(o, "code", ev->code);
    if (ev->text[0])
        cJSON_AddStringToObject(o, "text", ev->text);
    if (r->nevents++)
        bt_buf_putc(&r->events, ',');
    bt_buf_json(&r->events, o, false);
    cJSON_Delete(o);
}

void bt_recorder_add_sample(struct bt_recorder *r, const struct bt_sample *smp, int64_t arrival)
{
    on_sample(r, smp, arrival);
}

void bt_recorder_add_event(struct bt_recorder *r, const struct bt_event *ev)
{
    on_event(r, ev);
}

void bt_recorder_attach(struct bt_recorder *r, struct bt_store *s)
{
    s->tap = (struct bt_store_tap){.sample = on_sample, .event = on_event, .arg = r};
}

/* After a failed write the file may end in part of a line: cut it back to the
 * last complete line (shrinking needs no space on a full disk). */
static void mend(struct bt_recorder *r)
{
    if (r->torn && ftruncate(r->fd, r->good) == 0)
        r->torn = false;
}

int bt_recorder_flush(struct bt_recorder *r, int64_t t)
{
    if (!r->nsamples && !r->nevents)
        return 0;
    close_group(r);
    struct bt_buf out = {0};
    mend(r);
    /* could not cut it back: a newline ends the partial line (the reader skips
     * that one line), so this line starts on a line of its own */
    bt_buf_printf(&out, "%s{\"t\":%lld,\"s\":[%s],\"e\":[%s]}\n", r->torn ? "\n" : "",
                  (long long)t, bt_buf_str(&r->line), bt_buf_str(&r->events));
    bt_buf_reset(&r->line);
    bt_buf_reset(&r->events);
    r->nsamples = r->nevents = 0;
    bool ok = write_all(r->fd, out.buf, out.len);
    size_t len = out.len;
    bt_buf_free(&out);
    if (!ok) {
        /* Disk full or similar: say so once, drop this line, keep watching.
         * Recording resumes on a line boundary when writes succeed again. */
        int e = errno;
        r->torn = true;
        mend(r);
        if (!r->error[0])
            snprintf(r->error, sizeof r->error, "recording %s: %s (lines are being dropped)",
                     r->path, strerror(e));
        r->dropped++;
        return -1;
    }
    /* the size as the file has it: after a newline written over a partial line
     * (mend failed), the partial bytes count too */
    struct stat st;
    r->torn = false;
    r->good = fstat(r->fd, &st) == 0 ? st.st_size : r->good + (off_t)len;
    r->error[0] = '\0';
    r->lines++;
    return 0;
}

void bt_recorder_marker(struct bt_recorder *r, struct bt_store *s, int64_t t, const char *note)
{
    struct bt_event ev = {.t = t, .type = BT_EV_MARKER, .route = -1};
    bt_strlcpy(ev.text, note, sizeof ev.text);
    if (s)
        bt_store_event(s, &ev);
    else if (r)
        on_event(r, &ev);
    if (r)
        bt_recorder_flush(r, t);
}

const char *bt_recorder_error(const struct bt_recorder *r)
{
    return r && r->error[0] ? r->error : NULL;
}

unsigned long bt_recorder_lines(const struct bt_recorder *r)
{
    return r->lines;
}

unsigned long bt_recorder_dropped(const struct bt_recorder *r)
{
    return r->dropped;
}

const char *bt_recorder_path(const struct bt_recorder *r)
{
    return r->path;
}

void bt_recorder_close(struct bt_recorder *r)
{
    if (!r)
        return;
    bt_recorder_flush(r, 0);
    close(r->fd);
    bt_buf_free(&r->line);
    bt_buf_free(&r->events);
    free(r);
}

/* ---- reading ---- */

static const char *jstr(const cJSON *o, const char *k)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
    return cJSON_IsString(v) ? v->valuestring : NULL;
}

static bool jnum(const cJSON *o, const char *k, double *out)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
    if (!cJSON_IsNumber(v) || !isfinite(v->valuedouble))
        return false;
    *out = v->valuedouble;
    return true;
}

/* Times in a file become int64_t: converting an infinite or huge double is
 * undefined behaviour (fuzzing found 1e999 here), so bound them first. */
static bool time_ok(double t)
{
    return isfinite(t) && fabs(t) < 1e15;
}

static int name_index(const char *const *names, int n, const char *s)
{
    for (int i = 0; s && i < n; i++)
        if (!strcmp(names[i], s))
            return i;
    return -1;
}

static bool parse_route(const cJSON *o, struct bt_route *r, char *why, size_t n)
{
    static const char *const eps[] = {"runtime", "mantle"};
    static const char *const infs[] = {"on-demand", "cross-region", "global"};
    static const char *const qsrc[] = {"unknown", "service-quotas", "config", "default"};
    const char *name = jstr(o, "name"), *model = jstr(o, "model");
    if (!name || !model || !*name) {
        snprintf(why, n, "route without name or model");
        return false;
    }
    bt_route_defaults(r);
    bt_strlcpy(r->name, name, sizeof r->name);
    bt_strlcpy(r->model, model, sizeof r->model);
    const struct {
        const char *key;
        char *dst;
        size_t n;
    } strs[] = {
        {"region", r->region, sizeof r->region},
        {"profile", r->profile, sizeof r->profile},
        {"project", r->project, sizeof r->project},
        {"base_model", r->base_model, sizeof r->base_model},
        {"account", r->account, sizeof r->account},
        {"context", r->context, sizeof r->context},
    };
    for (size_t i = 0; i < BT_ARRAY_LEN(strs); i++)
        if (jstr(o, strs[i].key))
            bt_strlcpy(strs[i].dst, jstr(o, strs[i].key), strs[i].n);
    int e = name_index(eps, 2, jstr(o, "endpoint"));
    r->endpoint = e == 1 ? BT_EP_MANTLE : BT_EP_RUNTIME;
    int inf = name_index(infs, 3, jstr(o, "inference"));
    r->inference = inf < 0 ? bt_inference_from_model(r->model) : (enum bt_inference)inf;
    r->inference_set = true;
    const char *prio = jstr(o, "priority");
    r->priority = prio && !strcmp(prio, "offline") ? BT_PRIO_OFFLINE : BT_PRIO_ONLINE;
    jnum(o, "max_tokens", &r->max_tokens);
    jnum(o, "concurrency_limit", &r->concurrency_limit);
    if (!jnum(o, "burndown", &r->burndown) || r->burndown < 1)
        r->burndown = 1;
    const char *bs = jstr(o, "burndown_source");
    r->burndown_source = bs && !strcmp(bs, "config") ? "config" : bs && !strcmp(bs, "table") ? "table" : "default";
    if (jstr(o, "burndown_row"))
        bt_strlcpy(r->burndown_row, jstr(o, "burndown_row"), sizeof r->burndown_row);
    r->legacy_seen = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(o, "legacy"));
    if (jstr(o, "quota_code"))
        bt_strlcpy(r->quota_code, jstr(o, "quota_code"), sizeof r->quota_code);
    const cJSON *adm = cJSON_GetObjectItemCaseSensitive(o, "admission");
    if (cJSON_IsTrue(adm))
        bt_strlcpy(r->admission, "(recorded)", sizeof r->admission);
    const cJSON *q = cJSON_GetObjectItemCaseSensitive(o, "quotas");
    for (int k = 0; k < BT_Q_COUNT; k++) {
        const cJSON *x = cJSON_GetObjectItemCaseSensitive(q, bt_quota_kind_name(k));
        double v;
        if (!x || !jnum(x, "value", &v))
            continue;
        r->quota[k].value = v;
        int s = name_index(qsrc, 4, jstr(x, "source"));
        r->quota[k].source = s < 0 ? BT_QS_UNKNOWN : (enum bt_quota_source)s;
        int mb = bt_quota_match_by_name(jstr(x, "matched_by"));
        r->quota_match[k] = mb < 0 ? BT_QM_NONE : (enum bt_quota_match)mb;
        if (jstr(x, "code"))
            bt_strlcpy(r->quota[k].code, jstr(x, "code"), sizeof r->quota[k].code);
        if (jstr(x, "name"))
            bt_strlcpy(r->quota[k].name, jstr(x, "name"), sizeof r->quota[k].name);
    }
    return true;
}

static bool parse_header(struct bt_replay *rp, const char *line, int *sigmap, char *err,
                         size_t errlen)
{
    cJSON *h = cJSON_Parse(line);
    const char *fmt = h ? jstr(h, "format") : NULL;
    if (!fmt || strcmp(fmt, BT_REC_FORMAT) != 0) {
        snprintf(err, errlen, "%s:1: not a bedtop recording (no \"format\":\"%s\" header)",
                 rp->path, BT_REC_FORMAT);
        cJSON_Delete(h);
        return false;
    }
    const char *ver = jstr(h, "version");
    int major = 0, minor = 0;
    if (!ver || sscanf(ver, "%d.%d", &major, &minor) < 1) {
        snprintf(err, errlen, "%s:1: recording header has no version", rp->path);
        cJSON_Delete(h);
        return false;
    }
    if (major > BT_REC_MAJOR) {
        snprintf(err, errlen,
                 "%s: recording format %s is newer than this bedtop reads (%d.x); upgrade bedtop",
                 rp->path, ver, BT_REC_MAJOR);
        cJSON_Delete(h);
        return false;
    }
    if (jstr(h, "mode"))
        bt_strlcpy(rp->mode, jstr(h, "mode"), sizeof rp->mode);
    if (jstr(h, "created"))
        bt_parse_iso(jstr(h, "created"), &rp->start);
    if (jstr(h, "created_by"))
        bt_strlcpy(rp->created_by, jstr(h, "created_by"), sizeof rp->created_by);
    /* signal indices in the file -> ours (unknown names are dropped) */
    const cJSON *sigs = cJSON_GetObjectItemCaseSensitive(h, "signals");
    for (int i = 0; i < 256; i++)
        sigmap[i] = -1;
    /* walked, not indexed: cJSON_GetArrayItem(i) walks from the start each time */
    const cJSON *v;
    int ns = 0;
    cJSON_ArrayForEach(v, sigs) {
        if (ns >= 256)
            break;
        sigmap[ns++] = cJSON_IsString(v) ? bt_signal_by_name(v->valuestring) : -1;
    }
    struct bt_config *c = &rp->cfg;
    const cJSON *cj = cJSON_GetObjectItemCaseSensitive(h, "config");
    double d;
    if (jnum(cj, "interval", &d) && d >= 1)
        c->interval = d;
    if (jnum(cj, "cloudwatch_lag", &d) && d >= 0)
        c->cw_lag = d;
    if (jstr(cj, "warn_headroom"))
        bt_parse_threshold(jstr(cj, "warn_headroom"), &c->warn);
    if (jstr(cj, "crit_headroom"))
        bt_parse_threshold(jstr(cj, "crit_headroom"), &c->crit);
    if (jnum(cj, "daily_warn", &d))
        c->daily_warn_pct = d;
    if (jnum(cj, "daily_crit", &d))
        c->daily_crit_pct = d;
    if (jnum(cj, "oversize_factor", &d))
        c->oversize_factor = d;
    if (jnum(cj, "oversize_margin", &d))
        c->oversize_margin = d;
    if (jnum(cj, "retry_share", &d))
        c->retry_share = d;
    const cJSON *routes = cJSON_GetObjectItemCaseSensitive(h, "routes");
    int nr = cJSON_GetArraySize(routes);
    if (!cJSON_IsArray(routes) || nr > 100000) {
        snprintf(err, errlen, "%s:1: recording header has no routes array", rp->path);
        cJSON_Delete(h);
        return false;
    }
    int i = 0;
    const cJSON *rj;
    cJSON_ArrayForEach(rj, routes) { /* the header load was quadratic in routes */
        char why[128];
        struct bt_route r;
        i++;
        if (!parse_route(rj, &r, why, sizeof why)) {
            snprintf(err, errlen, "%s:1: route %d: %s", rp->path, i, why);
            cJSON_Delete(h);
            return false;
        }
        int k = bt_config_add_route(c, r.name);
        c->routes[k] = r;
    }
    cJSON_Delete(h);
    return true;
}

static int ev_type(const char *s)
{
    for (size_t i = 0; s && i < BT_ARRAY_LEN(ev_names); i++)
        if (!strcmp(ev_names[i], s))
            return (int)i;
    return -1;
}

/* ---- the poll-line scanner ----
 * Poll lines are most of a recording (a 24-hour, 200-route file is ~50 MB),
 * so the "s" arrays are read by a small hand-written scanner instead of a
 * cJSON tree per line (a 3-hour backfill line alone made a ~70 MB tree).
 * It accepts what cJSON accepts (numbers exactly as cJSON reads them) and
 * every other value, and the events, still go through cJSON. */

#define SCAN_DEPTH 1000      /* cJSON's nesting limit */

static const char *skip_ws(const char *p)
{
    while (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r')
        p++;
    return p;
}

static bool num_char(char c)
{
    return (c >= '0' && c <= '9') || c == '+' || c == '-' || c == 'e' || c == 'E' || c == '.';
}

/* A number as cJSON reads one: the run of [0-9+-eE.] (at most 63 bytes) given to
 * strtod. Plain decimals of up to 15 digits take Clinger's fast path instead
 * (an exact mantissa divided by an exact power of ten rounds once, as strtod). */
static const char *scan_number(const char *p, double *out)
{
    static const double pow10[] = {1, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7,
                                   1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15};
    if (*p != '-' && (*p < '0' || *p > '9'))
        return NULL;
    const char *q = p + (*p == '-');
    int digits = 0, frac = 0;
    uint64_t v = 0;
    while (*q >= '0' && *q <= '9' && digits < 16) {
        v = v * 10 + (uint64_t)(*q - '0');
        q++;
        digits++;
    }
    if (*q == '.' && digits && q[1] >= '0' && q[1] <= '9') {
        for (q++; *q >= '0' && *q <= '9' && digits < 16; q++, frac++, digits++)
            v = v * 10 + (uint64_t)(*q - '0');
    }
    if (digits && digits <= 15 && !num_char(*q)) {
        double d = (double)v / pow10[frac];
        *out = *p == '-' ? -d : d;
        return q;
    }
    char buf[64];
    size_t n = 0;
    while (n < sizeof buf - 1 && num_char(p[n]))
        n++;
    memcpy(buf, p, n);
    buf[n] = '\0';
    char *end;
    *out = strtod(buf, &end);
    return end == buf ? NULL : p + (end - buf);
}

static const char *skip_string(const char *p)
{
    if (*p != '"')
        return NULL;
    for (p++; *p && *p != '"'; p++)
        if (*p == '\\' && !*++p)
            return NULL;
    return *p == '"' ? p + 1 : NULL;
}

/* Any JSON value; NULL when it is not one. */
static const char *skip_value(const char *p, int depth)
{
    double d;
    p = skip_ws(p);
    if (depth > SCAN_DEPTH)
        return NULL;
    switch (*p) {
    case '"':
        return skip_string(p);
    case '[':
    case '{': {
        char close = *p == '[' ? ']' : '}';
        p = skip_ws(p + 1);
        if (*p == close)
            return p + 1;
        for (;;) {
            if (close == '}') {
                p = skip_string(skip_ws(p));
                if (!p || *(p = skip_ws(p)) != ':')
                    return NULL;
                p++;
            }
            p = skip_value(p, depth + 1);
            if (!p)
                return NULL;
            p = skip_ws(p);
            if (*p == close)
                return p + 1;
            if (*p != ',')
                return NULL;
            p++;
        }
    }
    case 't':
        return strncmp(p, "true", 4) ? NULL : p + 4;
    case 'f':
        return strncmp(p, "false", 5) ? NULL : p + 5;
    case 'n':
        return strncmp(p, "null", 4) ? NULL : p + 4;
    default:
        return scan_number(p, &d);
    }
}

/* What a sample array holds: the minutes it spans (pass one sizes the store). */
struct scan_span {
    int64_t min, max;        /* 0: no sample yet */
};

enum scan_result { SCAN_OK, SCAN_SYNTAX, SCAN_BAD_GROUP };

/* One "s" array at p: [[route, minute, arrival, [signal, value, ...]], ...].
 * With rp NULL it only checks (and measures the minutes into span); with rp
 * the samples go into its store. *endp is set past the array. */
static enum scan_result scan_samples(struct bt_replay *rp, int nroutes, const int *sigmap,
                                     const char *p, const char **endp, struct scan_span *span)
{
    p = skip_ws(p);
    if (*p != '[')
        return SCAN_SYNTAX;
    p = skip_ws(p + 1);
    if (*p == ']') {
        *endp = p + 1;
        return SCAN_OK;
    }
    for (;;) {
        p = skip_ws(p);
        if (*p != '[')
            return SCAN_BAD_GROUP; /* the caller tells it from broken JSON */
        p++;
        double hd[3];
        bool ok = true;
        int nhead = 0;
        /* the route, minute and arrival */
        for (; nhead < 3; nhead++) {
            p = skip_ws(p);
            if (*p == ']')
                break;
            const char *q = scan_number(p, &hd[nhead]);
            if (!q) {
                ok = false;
                if (!(q = skip_value(p, 3)))
                    return SCAN_SYNTAX;
            }
            p = skip_ws(q);
            if (*p == ',')
                p++;
            else if (*p != ']')
                return SCAN_SYNTAX;
        }
        if (nhead < 3 || *p == ']')
            return SCAN_BAD_GROUP;
        int route = 0;
        int64_t m = 0, a = 0;
        if (ok) {
            /* cJSON's valueint truncates toward zero */
            ok = hd[0] > -1 && hd[0] < nroutes && time_ok(hd[1]) && time_ok(hd[2]);
            route = ok ? (int)hd[0] : 0;
            m = ok ? (int64_t)hd[1] : 0;
            a = ok ? (int64_t)hd[2] : 0;
        }
        p = skip_ws(p);
        if (*p != '[')
            return SCAN_BAD_GROUP;
        p = skip_ws(p + 1);
        int count = 0;
        int sig = -1;
        if (*p == ']') {
            p++;
        } else {
            for (;;) {
                double d;
                const char *q = scan_number(skip_ws(p), &d);
                bool isnum = q != NULL;
                if (!q && !(q = skip_value(p, 4)))
                    return SCAN_SYNTAX;
                if (count % 2 == 0) {
                    sig = isnum && d > -1 && d < 256 ? sigmap[(int)d] : -1;
                } else if (sig >= 0 && isnum && ok) {
                    if (span && (!span->min || m < span->min))
                        span->min = m;
                    if (span && m > span->max)
                        span->max = m;
                    if (rp) {
                        struct bt_sample smp = {.t = m, .route = route,
                                                .signal = (enum bt_signal)sig, .value = d};
                        bt_store_add(&rp->store, &smp, a);
                        if (bt_signal_info[sig].source == BT_SRC_ADMISSION)
                            rp->has_admission = true;
                    }
                }
                count++;
                p = skip_ws(q);
                if (*p == ']') {
                    p++;
                    break;
                }
                if (*p != ',')
                    return SCAN_SYNTAX;
                p++;
            }
        }
        if (count % 2)
            ok = false;
        /* anything after the four items is ignored, as before */
        for (p = skip_ws(p); *p == ',';) {
            if (!(p = skip_value(p + 1, 3)))
                return SCAN_SYNTAX;
            p = skip_ws(p);
        }
        if (*p != ']')
            return SCAN_SYNTAX;
        if (!ok)
            return SCAN_BAD_GROUP;
        p = skip_ws(p + 1);
        if (*p == ']') {
            *endp = p + 1;
            return SCAN_OK;
        }
        if (*p != ',')
            return SCAN_SYNTAX;
        p++;
    }
}

/* A poll line's parts, located and checked without touching the store. */
struct poll_line {
    double t;
    const char *s;           /* the "s" array, NULL: none */
    const char *e, *e_end;   /* the "e" array, NULL: none */
};

static bool scan_line(const char *line, int nroutes, const int *sigmap, struct poll_line *pl,
                      struct scan_span *span, char *why, size_t n)
{
    const char *p = skip_ws(line);
    bool have_t = false, not_array = false, bad_group = false;
    *pl = (struct poll_line){0};
    bool seen_t = false, seen_s = false, seen_e = false;
    if (*p != '{')
        goto syntax;
    p = skip_ws(p + 1);
    if (*p != '}') {
        for (;;) {
            const char *k = skip_ws(p);
            const char *ke = skip_string(k);
            if (!ke)
                goto syntax;
            p = skip_ws(ke);
            if (*p != ':')
                goto syntax;
            p = skip_ws(p + 1);
            size_t klen = (size_t)(ke - k);
            /* the first of duplicate keys counts, as cJSON_GetObjectItem finds it */
            if (klen == 3 && k[1] == 't' && !seen_t) {
                seen_t = true;
                const char *q = scan_number(p, &pl->t);
                have_t = q && isfinite(pl->t);
                if (!q && !(q = skip_value(p, 1)))
                    goto syntax;
                p = q;
            } else if (klen == 3 && k[1] == 's' && !seen_s) {
                seen_s = true;
                const char *q;
                if (*p != '[') {
                    not_array = true; /* null too: cJSON's null is not an array */
                    if (!(q = skip_value(p, 1)))
                        goto syntax;
                } else if (scan_samples(NULL, nroutes, sigmap, p, &q, span) != SCAN_OK) {
                    /* a bad group, unless the array is not JSON at all */
                    bad_group = true;
                    if (!(q = skip_value(p, 1)))
                        goto syntax;
                } else {
                    pl->s = p;
                }
                p = q;
            } else if (klen == 3 && k[1] == 'e' && !seen_e) {
                seen_e = true;
                const char *q = skip_value(p, 1);
                if (!q)
                    goto syntax;
                if (*p != '[')
                    not_array = true;
                else {
                    pl->e = p;
                    pl->e_end = q;
                }
                p = q;
            } else if (!(p = skip_value(p, 1))) {
                goto syntax;
            }
            p = skip_ws(p);
            if (*p == '}')
                break;
            if (*p != ',')
                goto syntax;
            p++;
        }
    }
    /* cJSON_Parse ignores what follows the object */
    if (!have_t || !time_ok(pl->t)) {
        snprintf(why, n, "no poll time \"t\"");
        return false;
    }
    if (not_array) {
        snprintf(why, n, "\"s\" and \"e\" must be arrays");
        return false;
    }
    if (bad_group) {
        snprintf(why, n, "bad sample group (want [route, minute, arrival, [signal, value, ...]])");
        return false;
    }
    return true;
syntax:
    snprintf(why, n, "not valid JSON");
    return false;
}

static void load_events(struct bt_replay *rp, const cJSON *e)
{
    const cJSON *g;
    cJSON_ArrayForEach(g, e) {
        struct bt_event ev = {.route = -1};
        double v;
        int ty = ev_type(jstr(g, "type"));
        if (ty < 0 || !jnum(g, "t", &v) || !time_ok(v))
            continue;
        ev.type = (enum bt_event_type)ty;
        ev.t = (int64_t)v;
        if (jnum(g, "route", &v) && v >= -1 && v < rp->cfg.nroutes)
            ev.route = (int)v;
        const char *src = jstr(g, "source");
        ev.source = src && !strcmp(src, "quotas") ? BT_SRC_QUOTAS
                    : src && !strcmp(src, "admission") ? BT_SRC_ADMISSION : BT_SRC_CLOUDWATCH;
        if (ev.type == BT_EV_QUOTA) {
            static const char *const qsrc[] = {"unknown", "service-quotas", "config", "default"};
            const char *kind = jstr(g, "kind");
            int k = -1;
            for (int i = 0; kind && i < BT_Q_COUNT; i++)
                if (!strcmp(kind, bt_quota_kind_name(i)))
                    k = i;
            int qs = name_index(qsrc, 4, jstr(g, "quota_source"));
            /* null: the quota is unknown, the text says why (written as null, never NaN) */
            bool unknown = cJSON_IsNull(cJSON_GetObjectItemCaseSensitive(g, "value"));
            if (unknown)
                ev.value = NAN;
            if (k < 0 || qs < 0 || (!unknown && !jnum(g, "value", &ev.value)))
                continue;
            ev.quota_kind = (enum bt_quota_kind)k;
            ev.quota_source = (enum bt_quota_source)qs;
            int mb = bt_quota_match_by_name(jstr(g, "matched_by"));
            ev.matched_by = mb < 0 ? BT_QM_NONE : (enum bt_quota_match)mb;
        }
        if (jstr(g, "code"))
            bt_strlcpy(ev.code, jstr(g, "code"), sizeof ev.code);
        if (jstr(g, "text"))
            bt_strlcpy(ev.text, jstr(g, "text"), sizeof ev.text);
        bt_model_event(&rp->store, rp->cfg.routes, &ev);
        if (ev.type == BT_EV_MARKER) {
            rp->markers = bt_xrealloc(rp->markers, (rp->nmarkers + 1) * sizeof *rp->markers);
            rp->markers[rp->nmarkers].t = ev.t;
            bt_strlcpy(rp->markers[rp->nmarkers].text, ev.text, sizeof rp->markers[0].text);
            rp->nmarkers++;
        }
    }
}

/* Lines of a recording, from a file (read twice: one pass sizes the store)
 * or from memory. A line is handed out terminated, without its newline. */
struct line_src {
    FILE *f;                 /* NULL: memory */
    const char *mem;
    size_t len, pos;
    char *buf;
    size_t cap;
};

/* 1 a complete line, 2 a last line without newline, 0 the end. */
static int next_line(struct line_src *ls, char **line, size_t *n)
{
    if (ls->f) {
        ssize_t got = getdelim(&ls->buf, &ls->cap, '\n', ls->f);
        if (got <= 0)
            return 0;
        bool nl = ls->buf[got - 1] == '\n';
        ls->buf[got - (nl ? 1 : 0)] = '\0';
        *line = ls->buf;
        *n = (size_t)got - (nl ? 1 : 0);
        return nl ? 1 : 2;
    }
    if (ls->pos >= ls->len)
        return 0;
    const char *p = ls->mem + ls->pos;
    const char *e = memchr(p, '\n', ls->len - ls->pos);
    size_t k = e ? (size_t)(e - p) : ls->len - ls->pos;
    if (k + 1 > ls->cap) {
        ls->cap = k + 1;
        ls->buf = bt_xrealloc(ls->buf, ls->cap);
    }
    memcpy(ls->buf, p, k);
    ls->buf[k] = '\0';
    ls->pos += k + (e ? 1 : 0);
    *line = ls->buf;
    *n = k;
    return e ? 1 : 2;
}

static bool rewind_src(struct line_src *ls)
{
    if (!ls->f) {
        ls->pos = 0;
        return true;
    }
    return fseek(ls->f, 0, SEEK_SET) == 0;
}

/* The one reader behind bt_replay_open and bt_replay_open_mem. */
static bool replay_open_src(struct bt_replay *rp, const char *path, struct line_src *ls,
                            void (*warn)(void *, const char *), void *warn_arg, char *err,
                            size_t errlen)
{
    char *line;
    size_t len;
    int sigmap[256];
    if (next_line(ls, &line, &len) != 1) {
        snprintf(err, errlen, "%s: empty recording (no complete header line)", path);
        return false;
    }
    if (!parse_header(rp, line, sigmap, err, errlen))
        return false;
    rp->base = bt_xcalloc((size_t)(rp->cfg.nroutes ? rp->cfg.nroutes : 1), sizeof *rp->base);
    memcpy(rp->base, rp->cfg.routes, (size_t)rp->cfg.nroutes * sizeof *rp->base);
    bt_burndown_free(&rp->cfg.burndown);
    bt_burndown_add(&rp->cfg.burndown, "*", 1, -1, "recording"); /* burndown comes from the header */

    /* First pass: the minutes the samples span, to size the store to them
     * (demo and backfill recordings start with history before the first poll). */
    struct scan_span span = {0};
    int64_t first = 0, last = 0;
    int kind;
    while ((kind = next_line(ls, &line, &len)) == 1) {
        struct poll_line pl;
        char why[160];
        if (!scan_line(line, rp->cfg.nroutes, sigmap, &pl, &span, why, sizeof why))
            continue;
        int64_t t = (int64_t)pl.t;
        if (!first || t < first)
            first = t;
        if (t > last)
            last = t;
    }
    int64_t lo = span.min && span.min < first ? span.min : first;
    int64_t hi = span.max > last ? span.max : last;
    /* a margin of an hour: views look a little past the newest minute */
    int64_t span_min = first ? (hi - lo) / 60 + 1 + 60 : 1440;
    if (span_min > 16 * 1440)
        span_min = 16 * 1440;
    rp->cfg.history_minutes = (int)span_min;
    bt_store_init(&rp->store, rp->cfg.nroutes, (int)span_min);
    bt_store_track_arrival(&rp->store);
    if (!rewind_src(ls)) {
        snprintf(err, errlen, "%s: %s", path, strerror(errno));
        return false;
    }
    next_line(ls, &line, &len); /* the header again */

    int lineno = 1;
    size_t cap = 0;
    while ((kind = next_line(ls, &line, &len)) != 0) {
        lineno++;
        char why[160];
        bool truncated = kind == 2;
        struct poll_line pl;
        bool blank = !len;
        if (!blank && !truncated &&
            scan_line(line, rp->cfg.nroutes, sigmap, &pl, NULL, why, sizeof why)) {
            const char *end;
            if (pl.s)
                scan_samples(rp, rp->cfg.nroutes, sigmap, pl.s, &end, NULL);
            if (pl.e) {
                cJSON *e = cJSON_ParseWithLength(pl.e, (size_t)(pl.e_end - pl.e));
                load_events(rp, e);
                cJSON_Delete(e);
            }
            if (rp->npolls == cap) {
                cap = cap ? cap * 2 : 1024;
                rp->polls = bt_xrealloc(rp->polls, cap * sizeof *rp->polls);
            }
            rp->polls[rp->npolls++] = (int64_t)pl.t;
        } else if (!blank) {
            char msg[300];
            snprintf(msg, sizeof msg, "%s:%d: %s; line skipped", path, lineno,
                     truncated ? "truncated last line (recording interrupted?)" : why);
            if (!rp->skipped)
                bt_strlcpy(rp->first_problem, msg, sizeof rp->first_problem);
            rp->skipped++;
            if (warn)
                warn(warn_arg, msg);
        }
        if (truncated)
            break;
    }
    /* polls are written in order; sort defensively for binary search */
    for (size_t i = 1; i < rp->npolls; i++) {
        int64_t v = rp->polls[i];
        size_t j = i;
        while (j > 0 && rp->polls[j - 1] > v) {
            rp->polls[j] = rp->polls[j - 1];
            j--;
        }
        rp->polls[j] = v;
    }
    if (!rp->start || (rp->npolls && rp->polls[0] < rp->start))
        rp->start = rp->npolls ? rp->polls[0] : 0;
    rp->end = rp->npolls ? rp->polls[rp->npolls - 1] : 0;
    rp->store.tap = (struct bt_store_tap){0};
    bt_replay_seek(rp, rp->end);
    return true;
}

bool bt_replay_open(struct bt_replay *rp, const char *path, void (*warn)(void *, const char *),
                    void *warn_arg, char *err, size_t errlen)
{
    memset(rp, 0, sizeof *rp);
    bt_strlcpy(rp->path, path, sizeof rp->path);
    bt_strlcpy(rp->mode, "live", sizeof rp->mode);
    bt_config_defaults(&rp->cfg);
    struct line_src ls = {0};
    struct stat st;
    /* O_NONBLOCK: a FIFO must not block the open before it can be refused */
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    const char *why = NULL;
    if (fd < 0 || fstat(fd, &st) != 0)
        why = strerror(errno);
    else if (!S_ISREG(st.st_mode))
        /* /dev/zero behind a symlink was read up to 4 GiB into memory */
        why = "not a regular file; replay reads recordings bedtop record wrote (save a "
              "pipe's output to a file first)";
    else if (st.st_size > ((off_t)4 << 30))
        why = "larger than the 4 GiB bedtop reads; split it (the header line with any "
              "run of poll lines is a recording)";
    else if (!(ls.f = fdopen(fd, "rb")))
        why = strerror(errno);
    if (why) {
        snprintf(err, errlen, "%s: %s", path, why);
        if (fd >= 0)
            close(fd);
        bt_config_free(&rp->cfg);
        return false;
    }
    bool ok = replay_open_src(rp, path, &ls, warn, warn_arg, err, errlen);
    fclose(ls.f);
    free(ls.buf);
    if (!ok)
        bt_replay_free(rp);
    return ok;
}

bool bt_replay_open_mem(struct bt_replay *rp, const char *name, const char *data, size_t len,
                        void (*warn)(void *, const char *), void *warn_arg, char *err,
                        size_t errlen)
{
    memset(rp, 0, sizeof *rp);
    bt_strlcpy(rp->path, name, sizeof rp->path);
    bt_strlcpy(rp->mode, "live", sizeof rp->mode);
    bt_config_defaults(&rp->cfg);
    struct line_src ls = {.mem = data, .len = len};
    bool ok = replay_open_src(rp, name, &ls, warn, warn_arg, err, errlen);
    free(ls.buf);
    if (!ok)
        bt_replay_free(rp);
    return ok;
}

void bt_replay_seek(struct bt_replay *rp, int64_t t)
{
    if (t < rp->start)
        t = rp->start;
    if (t > rp->end)
        t = rp->end;
    bt_store_set_horizon(&rp->store, rp->cfg.routes, rp->base, t ? t : 1);
}

size_t bt_replay_poll_at(const struct bt_replay *rp, int64_t t)
{
    size_t lo = 0, hi = rp->npolls;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (rp->polls[mid] <= t)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo ? lo - 1 : 0;
}

void bt_replay_free(struct bt_replay *rp)
{
    bt_store_free(&rp->store);
    bt_config_free(&rp->cfg);
    free(rp->base);
    free(rp->polls);
    free(rp->markers);
    memset(rp, 0, sizeof *rp);
}

/* "14:32" or "14:32:05": one or two digits of hour, two of minute and second. */
static bool parse_hhmm(const char *s, int *hh, int *mm, int *ss)
{
    const char *p = s;
    int n = 0;
    *hh = *mm = *ss = 0;
    for (; isdigit((unsigned char)*p) && n < 3; p++, n++)
        *hh = *hh * 10 + (*p - '0');
    if (n < 1 || n > 2 || *p != ':' || !isdigit((unsigned char)p[1]) ||
        !isdigit((unsigned char)p[2]))
        return false;
    *mm = (p[1] - '0') * 10 + (p[2] - '0');
    p += 3;
    if (*p == ':') {
        if (!isdigit((unsigned char)p[1]) || !isdigit((unsigned char)p[2]))
            return false;
        *ss = (p[1] - '0') * 10 + (p[2] - '0');
        p += 3;
    }
    return !*p && *hh < 24 && *mm < 60 && *ss < 60;
}

bool bt_parse_when(const char *s, int64_t start, int64_t end, int64_t rel, int64_t *out)
{
    double d;
    if (s[0] == '-' || s[0] == '+') {
        /* bounded by BT_DURATION_MAX, so the conversion is defined */
        if (!bt_parse_duration(s + 1, &d))
            return false;
        *out = rel + (s[0] == '-' ? -(int64_t)d : (int64_t)d);
        return true;
    }
    int hh, mm, ss;
    if (parse_hhmm(s, &hh, &mm, &ss)) {
        /* the time of day on the day nearest the reference that falls in range */
        int64_t ref = rel ? rel : start;
        int64_t day = ref - (ref % 86400);
        int64_t best = 0;
        bool best_in = false;
        for (int k = -1; k <= 1; k++) {
            int64_t c = day + k * 86400 + hh * 3600 + mm * 60 + ss;
            bool in = (!start || c >= start - 60) && (!end || c <= end + 60);
            bool closer = !best || llabs(c - ref) < llabs(best - ref);
            if ((in && (!best_in || closer)) || (!in && !best_in && closer)) {
                best = c;
                best_in = in;
            }
        }
        *out = best;
        return true;
    }
    int64_t t;
    if (bt_parse_iso(s, &t)) {
        *out = t;
        return true;
    }
    long v;
    if (isdigit((unsigned char)s[0]) && bt_parse_long(s, 1000000000L, 9999999999L, &v)) {
        *out = v;
        return true;
    }
    return false;
}

bool bt_replay_when(const struct bt_replay *rp, const char *s, int64_t *out)
{
    return bt_parse_when(s, rp->start, rp->end, s[0] == '+' ? rp->start : rp->end, out);
}
