/* The running application: config, store, collectors, loop. */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <termios.h>
#include <time.h>
#include <sys/stat.h>
#include <unistd.h>

#include "app/app.h"
#include "collectors/admission.h"
#include "collectors/awsgroup.h"
#include "collectors/catalogue.h"
#include "collectors/tags.h"
#include "collectors/cloudwatch.h"
#include "collectors/cw_insights.h"
#include "collectors/demo.h"
#include "net/http.h"
#include "net/loop.h"
#include "collectors/pricing.h"
#include "collectors/promsource.h"
#include "collectors/quotas.h"
#include "core/dataminute.h"
#include "core/recording.h"
#include "render/report.h"
#include "core/util.h"
#include "io/file.h"
#include "io/recfile.h"
#include "io/conffile.h"

/* The AWS CLI's MFA prompt: on the terminal, the code not echoed. */
static int tty_mfa_prompt(const char *serial, char *code, size_t n, void *arg)
{
    (void)arg;
    int fd = open("/dev/tty", O_RDWR | O_CLOEXEC);
    if (fd < 0)
        return -1;
    char prompt[400];
    int pl = snprintf(prompt, sizeof prompt, "Enter MFA code for %s: ", serial);
    if (pl > 0 && write(fd, prompt, (size_t)pl) < 0) {
        close(fd);
        return -1;
    }
    struct termios old, quiet;
    bool restore = tcgetattr(fd, &old) == 0;
    if (restore) {
        quiet = old;
        quiet.c_lflag &= (tcflag_t)~ECHO;
        tcsetattr(fd, TCSAFLUSH, &quiet);
    }
    size_t len = 0;
    char c;
    while (read(fd, &c, 1) == 1 && c != '\n' && c != '\r')
        if (len + 1 < n && c >= '0' && c <= '9')
            code[len++] = c;
    code[len] = '\0';
    if (restore)
        tcsetattr(fd, TCSAFLUSH, &old);
    if (write(fd, "\n", 1) < 0)
        len = 0;
    close(fd);
    return len ? 0 : -1;
}

void app_process_init(void)
{
    bt_set_oom_hook(bt_oom_say);
}

bool app_setup_config(struct app_opts *o, struct bt_config *cfg)
{
    char err[2048];
    bt_config_init(cfg);
    if (o->region)
        bt_strlcpy(cfg->override_region, o->region, sizeof cfg->override_region);
    if (o->profile)
        bt_strlcpy(cfg->override_profile, o->profile, sizeof cfg->override_profile);
    if (o->demo) {
        if (o->config && !bt_config_load(cfg, o->config, err, sizeof err)) {
            app_file_error(err, o->config, "config", false);
            bt_config_free(cfg);
            return false;
        }
        bt_config_free(cfg);
        struct bt_config keep = *cfg;
        bt_config_init(cfg);
        cfg->warn = keep.warn;
        cfg->crit = keep.crit;
        bt_demo_config(cfg);
    } else if (!bt_config_load(cfg, o->config, err, sizeof err)) {
        app_file_error(err, o->config, "config", false);
        bt_config_free(cfg);
        return false;
    }
    bt_config_finish(cfg);
    if (cfg->burndown_error[0]) {
        bt_err("%s", cfg->burndown_error);
        bt_config_free(cfg);
        return false;
    }
    if (!isnan(o->interval))
        cfg->interval = o->interval;
    if (o->admission)
        bt_strlcpy(cfg->admission, o->admission, sizeof cfg->admission);
    if (o->theme)
        bt_strlcpy(cfg->theme, o->theme, sizeof cfg->theme);
    return true;
}

int64_t app_demo_now(const struct app_opts *o, double default_minute)
{
    if (isnan(o->demo_at))
        return bt_demo_t0() + (int64_t)llround(default_minute * 60);
    /* --demo-at M names data minute M of the story (the one clock, core/dataminute.h):
     * shown as replay --at and export's row show it, the last second it is the newest;
     * a fraction picks a second of that time (M.5: 30 s after it appears). The demo
     * publishes with the default lag (collectors/demo.c), its config's. */
    struct bt_config *c = bt_xcalloc(1, sizeof *c);
    bt_config_defaults(c);
    double whole = floor(o->demo_at);
    int sec = o->demo_at > whole ? (int)llround((o->demo_at - whole) * 60) : -1;
    int64_t t = bt_data_minute_at(c, bt_demo_t0() + (int64_t)whole * 60, sec > 59 ? 59 : sec);
    free(c);
    return t;
}

int64_t app_poll_once(struct app *a, int64_t start, int *sig)
{
    *sig = 0;
    if (a->o->demo) {
        bt_demo_collector.tick(a->inst[0], start);
        return start;
    }
    /* One evaluation's worth of data: every collector once (admission twice, a gap
     * apart, for rates); give up after a bound and report what is stale. */
    a->loop.deadline = bt_wall_now() + 30 + 2 * a->cfg.admission_gap;
    bt_loop_signals();
    *sig = bt_loop_run(&a->loop);
    if (*sig > 0)
        return 0; /* stopped before its data was in: the caller reports nothing */
    app_print_new_errors(a);
    return (int64_t)time(NULL);
}

/* ---- the running application: config, store, collectors, loop ---- */

static const struct bt_collector_ops *const live_collectors[] = {
    &bt_cloudwatch_collector, &bt_quotas_collector, &bt_admission_collector,
    &bt_cw_insights_collector, &bt_catalogue_collector, &bt_tags_collector,
    &bt_pricing_collector,
};
static const struct bt_collector_ops *const demo_collectors[] = {&bt_demo_collector};

/* what the credential chain asks beside the collectors (aws/creds_assume.c) */
static const struct bt_iam_need creds_iam[] = {
    {"sts:AssumeRole", "a profile with role_arn, on that role", false},
    {NULL, NULL, false},
};

size_t app_iam_needs(const struct bt_iam_need **out, size_t max)
{
    size_t n = 0;
    for (size_t i = 0; i <= BT_ARRAY_LEN(live_collectors); i++) {
        const struct bt_iam_need *l = i < BT_ARRAY_LEN(live_collectors) ? live_collectors[i]->iam : creds_iam;
        for (; l && l->action; l++) {
            bool seen = false;
            for (size_t k = 0; k < n && k < max && !seen; k++)
                seen = !strcmp(out[k]->action, l->action);
            if (seen)
                continue;
            if (n < max)
                out[n] = l;
            n++;
        }
    }
    return n;
}
/* --source prometheus+http://...: bedtop's own series, no AWS request */
static const struct bt_collector_ops *const source_collectors[] = {&bt_promsource_collector};

void app_free(struct app *a)
{
    for (int i = 0; i < a->loop.n; i++)
        if (a->inst[i])
            a->ops[i]->destroy(a->inst[i]);
    a->loop.n = 0;
    if (a->rec)
        bt_recorder_close(a->rec);
    a->rec = NULL;
    if (a->ctx.http)
        bt_http_free(a->ctx.http);
    a->ctx.http = NULL;
    bt_store_free(&a->store);
    if (a->config_ok)
        bt_config_free(&a->cfg);
    a->config_ok = false;
}

/* What to do about a failed route discovery, by the kind of failure. */
static const char *discovery_remedy(enum bt_errkind kind)
{
    switch (kind) {
    case BT_ERR_CREDENTIALS:
        return "set AWS_PROFILE (or --profile), export AWS_ACCESS_KEY_ID and "
               "AWS_SECRET_ACCESS_KEY, or run aws sso login; without AWS: bedtop --demo";
    case BT_ERR_REGION:
        return "without AWS: bedtop --demo";
    case BT_ERR_ACCESS:
        return "grant cloudwatch:ListMetrics, or list the routes in the config (bedtop.conf(5))";
    case BT_ERR_THROTTLED:
        return "retry in a minute, or list the routes in the config (bedtop.conf(5))";
    default:
        return "check the network and --endpoint-url, or list the routes in the config "
               "(bedtop.conf(5)); without AWS: bedtop --demo";
    }
}

int app_init_config(struct app *a, struct app_opts *o, enum bt_run_mode mode)
{
    memset(a, 0, sizeof *a);
    a->o = o;
    if (!app_setup_config(o, &a->cfg))
        return 3;
    a->config_ok = true;
    a->ctx = (struct bt_ctx){.cfg = &a->cfg, .store = &a->store, .mode = mode,
                             .verbose = o->verbose, .profile = o->profile, .region = o->region,
                             .endpoint_url = o->endpoint_url, .admission_url = o->admission,
                             .api_cost = o->api_cost ? o->api_cost : &a->cost,
                             .source_url = o->source, .source_match = o->match};
    char base[512];
    if (o->match && !o->source) {
        bt_err("--match selects series of a Prometheus source; add --source prometheus+http://HOST:PORT");
        return 3;
    }
    if (o->source && (o->demo || !bt_promsrc_parse(o->source, base, sizeof base) ||
                      !bt_promsrc_selector("x", o->match, base, sizeof base))) {
        char shown[512];
        bt_url_redact(o->source, shown, sizeof shown);
        bt_err("--source '%s'%s%s: %s", shown, o->match ? " --match " : "", o->match ? o->match : "",
               o->demo ? "the demo reads no source; drop --demo"
                       : "use prometheus+http://HOST:PORT (a Prometheus server scraping bedtop serve) "
                         "and label matchers such as region=\"us-east-1\"");
        return 3;
    }
    if (!o->demo) {
        bt_awsgroup_warn_file_perms(); /* now, before a dashboard takes the screen */
        a->ctx.http = bt_http_new(o->verbose);
        if (!a->ctx.http) {
            bt_err("cannot initialise libcurl");
            return 3;
        }
        char mfa_err[768];
        bool tty = isatty(STDIN_FILENO); /* the prompt itself goes to /dev/tty */
        if (!o->source && /* reading Prometheus: no AWS credential is used */
            bt_awsgroup_mfa_preflight(&a->ctx, tty ? tty_mfa_prompt : NULL, mfa_err, sizeof mfa_err) != 0) {
            bt_err("%s", mfa_err);
            return 3;
        }
    }
    return 0;
}

/* With no routes configured: discovered now, waiting (before the loop exists). */
static int discover_routes(struct app *a)
{
    struct app_opts *o = a->o;
    {
        /* route discovery waits before the loop exists: a Ctrl-C there is the loop's
         * signal too (ends the wait at once, exit 128+sig), neither ignored until the
         * requests time out nor death by the default action halfway through */
        if (!a->cfg.nroutes)
            bt_loop_signals();
        if (!a->cfg.nroutes && o->source) {
            char err[512];
            int n = bt_promsrc_discover(&a->ctx, &a->cfg, err, sizeof err);
            if (n < 0 && bt_loop_quit_signal)
                return 128 + bt_loop_quit_signal; /* Ctrl-C during discovery */
            if (n <= 0) {
                bt_err("route discovery: %s", n < 0 ? err : "the Prometheus server has no bedtop_route_status series (is bedtop serve scraped?)");
                return 3;
            }
            bt_config_finish(&a->cfg);
        } else if (!a->cfg.nroutes) {
            char err[2048];
            enum bt_errkind kind;
            int n = bt_cloudwatch_discover(&a->ctx, &a->cfg, &kind, err, sizeof err);
            if (n < 0 && bt_loop_quit_signal)
                return 128 + bt_loop_quit_signal; /* Ctrl-C during discovery */
            if (n < 0) {
                bt_err("%s; %s", err, discovery_remedy(kind));
                return 3;
            }
            if (n == 0) {
                bt_err("route discovery: no routes configured%s%s and CloudWatch lists no "
                       "AWS/Bedrock ModelId metrics in this Region; add [route NAME] sections "
                       "(bedtop.conf(5)), or try bedtop --demo",
                       a->cfg.path[0] ? " in " : "", a->cfg.path);
                return 3;
            }
            bt_config_finish(&a->cfg);
        }
    }
    return 0;
}

int app_init_start(struct app *a, double sim_start)
{
    struct app_opts *o = a->o;
    if (o->serve)
        bt_config_serve_history(&a->cfg);
    bt_store_init(&a->store, a->cfg.nroutes, a->cfg.history_minutes);
    bt_store_bind_routes(&a->store, a->cfg.routes); /* events change routes, collectors never */
    const struct bt_collector_ops *const *ops = o->demo     ? demo_collectors
                                                : o->source ? source_collectors
                                                            : live_collectors;
    int n = o->demo     ? (int)BT_ARRAY_LEN(demo_collectors)
            : o->source ? (int)BT_ARRAY_LEN(source_collectors)
                        : (int)BT_ARRAY_LEN(live_collectors);
    a->ops = ops;
    for (int i = 0; i < n; i++)
        a->tasks[i] = (struct bt_loop_task){
            .tick = ops[i]->tick, .next_due = ops[i]->next_due, .busy = ops[i]->busy,
        };
    a->loop = (struct bt_loop){.http = a->ctx.http, .tasks = a->tasks, .inst = a->inst, .n = n};
    /* before any collector starts: creating one may start a child (credential_process),
     * and a signal from then on is the loop's to act on (it ends the child's process
     * group) rather than death leaving the child behind. Before, that depended on how
     * soon after the child the command reached its own bt_loop_signals (a loaded machine
     * lost the race: t_credentials' hanging helper, one run in three) */
    if (!o->demo)
        bt_loop_signals();
    for (int i = 0; i < n; i++)
        a->inst[i] = ops[i]->create(&a->ctx);
    bt_clock_start(&a->loop.clock, sim_start, o->demo ? o->demo_speed : 1);
    return 0;
}

/* Sets everything up; returns an exit code (3) on failure, 0 on success. */
int app_init(struct app *a, struct app_opts *o, enum bt_run_mode mode, double sim_start)
{
    int rc = app_init_config(a, o, mode);
    if (rc == 0 && !o->demo && !a->cfg.nroutes)
        rc = discover_routes(a);
    return rc ? rc : app_init_start(a, sim_start);
}

void *app_find_inst(struct app *a, const struct bt_collector_ops *ops)
{
    for (int i = 0; i < a->loop.n; i++)
        if (a->ops[i] == ops)
            return a->inst[i];
    return NULL;
}

void app_cost(struct app *a, double *per_poll, double *per_day)
{
    void *cw = app_find_inst(a, &bt_cloudwatch_collector);
    void *ins = app_find_inst(a, &bt_cw_insights_collector);
    *per_poll = *per_day = NAN;
    if (cw)
        bt_cloudwatch_cost(cw, per_poll, per_day);
    if (cw && ins) {
        /* the unseen-caller queries, billed like the rest: a poll's share of them */
        double day;
        bt_cw_insights_cost(ins, &day);
        double iv = a->cfg.interval > 0 ? a->cfg.interval : 60;
        *per_day += day;
        *per_poll += day * iv / 86400.0;
    }
}

/* What to do about a collector's error; the routes it feeds show as stale meanwhile. */
static const char *source_remedy(enum bt_source s)
{
    if (s == BT_SRC_ADMISSION)
        return "check the admission URL (--admission or admission = in the config); "
               "the routes show as stale until it answers";
    return "check the network, the credentials and --endpoint-url; the routes show as stale "
           "until it answers";
}

/* Collector errors seen since the last call, once each, on stderr. */
void app_print_new_errors(struct app *a)
{
    const struct bt_store *st = &a->store;
    uint64_t n = bt_store_nevents(st);
    uint64_t from = a->errors_seen;
    if (n > BT_EVENT_RING && from < n - BT_EVENT_RING)
        from = n - BT_EVENT_RING;
    for (uint64_t i = from; i < n; i++) {
        const struct bt_event *ev = bt_store_event_at(st, i);
        if (!ev || ev->type != BT_EV_ERROR)
            continue;
        bool dup = false;
        for (uint64_t j = from; j < i && !dup; j++) {
            const struct bt_event *p = bt_store_event_at(st, j);
            dup = p && p->type == BT_EV_ERROR && !strcmp(p->text, ev->text);
        }
        if (!dup && strcmp(a->last_error[ev->source], ev->text) != 0) {
            /* collectors start their text with their name ("cloudwatch us-east-1: ...") */
            const char *src = bt_source_name(ev->source);
            bool named = !strncmp(ev->text, src, strlen(src));
            bt_err("%s%s%s; %s", named ? "" : src, named ? "" : ": ", ev->text,
                   source_remedy(ev->source));
            bt_strlcpy(a->last_error[ev->source], ev->text, sizeof a->last_error[0]);
        }
    }
    a->errors_seen = n;
}

int app_init_live(struct app *a, struct app_opts *o, const char *rec_path, int64_t *start)
{
    *start = o->demo ? app_demo_now(o, 0) : (int64_t)time(NULL);
    int rc = app_init(a, o, BT_MODE_LIVE, (double)*start);
    if (rc) {
        app_free(a);
        return rc;
    }
    return app_record_to(a, rec_path, *start);
}

int app_record_to(struct app *a, const char *rec_path, int64_t start)
{
    if (!rec_path)
        return 0;
    char err[600];
    a->rec = bt_recorder_open(rec_path, &a->cfg, a->o->demo ? "demo" : "live", start, err, sizeof err);
    if (!a->rec) {
        app_file_error(err, rec_path, "recording", true);
        app_free(a);
        return 3;
    }
    bt_recorder_attach(a->rec, &a->store);
    return 0;
}

bool app_select_routes(const char **routes, int nroutes, const struct bt_config *cfg, bool **keep)
{
    *keep = NULL;
    if (!nroutes)
        return true;
    bool *k = bt_xcalloc((size_t)(cfg->nroutes ? cfg->nroutes : 1), sizeof *k);
    for (int i = 0; i < nroutes; i++) {
        int r = bt_config_find_route(cfg, routes[i]);
        if (r >= 0) {
            k[r] = true;
            continue;
        }
        struct bt_buf names = {0};
        for (int j = 0; j < cfg->nroutes; j++) {
            bt_buf_puts(&names, j ? ", " : "");
            bt_buf_puts(&names, cfg->routes[j].name);
        }
        bt_err("--route: no route '%s'; the routes are: %s", routes[i],
               cfg->nroutes ? bt_buf_str(&names) : "(none)");
        bt_buf_free(&names);
        free(k);
        return false;
    }
    *keep = k;
    return true;
}

enum bt_status app_unknown_as(const char *unknown_as)
{
    enum bt_status s = BT_ST_WARN;
    if (unknown_as)
        bt_status_parse(unknown_as, &s); /* checked when parsed */
    return s;
}

bool app_unknown_as_valid(const char *s)
{
    enum bt_status st;
    return bt_status_parse(s, &st);
}

bool app_output_open(struct app_output *w, const char *path)
{
    *w = (struct app_output){.f = stdout, .path = path};
    if (!path)
        return true;
    struct stat st;
    int fd;
    if (stat(path, &st) == 0 && !S_ISREG(st.st_mode)) {
        fd = open(path, O_WRONLY | O_CLOEXEC); /* a device or pipe: written as it is */
    } else {
        /* a regular file appears whole or not at all (a textfile collector or a
         * cron job never reads half a report): written beside it, then renamed */
        size_t n = strlen(path) + 8;
        w->tmp = bt_xmalloc(n);
        snprintf(w->tmp, n, "%s.XXXXXX", path);
        fd = mkstemp(w->tmp);
        if (fd >= 0 && fchmod(fd, 0600) != 0) {
            close(fd);
            unlink(w->tmp);
            fd = -1;
        }
    }
    w->f = fd >= 0 ? fdopen(fd, "w") : NULL;
    if (!w->f) {
        bt_err("-o %s: %s; choose a file in a directory you can write", path, strerror(errno));
        if (fd >= 0) {
            close(fd);
            if (w->tmp)
                unlink(w->tmp);
        }
        free(w->tmp);
        w->tmp = NULL;
        return false;
    }
    return true;
}

void app_output_discard(struct app_output *w)
{
    if (w->f && w->f != stdout)
        fclose(w->f);
    if (w->tmp)
        unlink(w->tmp); /* the file it would have replaced stays as it was */
    free(w->tmp);
    *w = (struct app_output){0};
}

bool app_output_close(struct app_output *w)
{
    bool bad = fflush(w->f) != 0 || ferror(w->f);
    if (w->f != stdout)
        bad |= fclose(w->f) != 0;
    if (!bad && w->tmp && rename(w->tmp, w->path) != 0)
        bad = true;
    if (bad) {
        bt_err("%s: %s; check the disk and the path", w->path ? w->path : "stdout",
               strerror(errno));
        if (w->tmp)
            unlink(w->tmp);
    }
    free(w->tmp);
    *w = (struct app_output){0};
    return !bad;
}

void app_file_error(const char *err, const char *path, const char *kind, bool write)
{
    /* the remedy follows from the file's state, never from the message's words: a
     * file that opened has a message about what it holds, which says what to do */
    if (!path) {
        bt_err("%s", err);
        return;
    }
    char dir[1024];
    bt_strlcpy(dir, path, sizeof dir);
    char *slash = strrchr(dir, '/');
    if (slash)
        *(slash == dir ? slash + 1 : slash) = '\0';
    else
        bt_strlcpy(dir, ".", sizeof dir);
    struct stat st;
    const char *remedy;
    if (write) {
        if (stat(dir, &st) != 0)
            remedy = "its directory does not exist: create it (mkdir -p) or choose another path";
        else if (access(dir, W_OK) != 0)
            remedy = "its directory is not writable by this user: choose one you can write";
        else
            remedy = NULL; /* what the file holds, or a remedy already said */
    } else if (stat(path, &st) != 0) {
        remedy = !strcmp(kind, "config")
                     ? "check the path, or drop -c to use the default config "
                       "($XDG_CONFIG_HOME/bedtop/config, see bedtop.conf(5)); --demo needs none"
                     : "check the path; bedtop record FILE (or the dashboard's --record FILE) "
                       "makes a recording";
    } else if (access(path, R_OK) != 0) {
        remedy = "it is not readable by this user: check its owner and mode (ls -l); recordings "
                 "are created 0600";
    } else {
        remedy = NULL; /* opened: the error is about what it holds and says so */
    }
    if (remedy)
        bt_err("%s; %s", err, remedy);
    else
        bt_err("%s", err);
}
