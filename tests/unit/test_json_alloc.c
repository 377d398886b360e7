/* Issue 16 item 11: cJSON_Print* results were used unchecked, and some buffers cJSON
 * allocated were released with free(). Here cJSON runs on its own allocation hooks
 * (every block 16 bytes into a tagged allocation, as a custom allocator would do), so
 * a free() of a cJSON buffer aborts and a cJSON_free of anything else is caught; then
 * with hooks that fail, a print must end in "out of memory" (exit 3), not a NULL
 * dereference. Core says nothing itself: the message is the out-of-memory hook's that
 * bedtop installs at start-up (bt_oom_say); with none, exit 3 alone. */
#include <cjson/cJSON.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "collectors/cloudwatch.h"
#include "collectors/quotas.h"
#include "core/json.h"
#include "core/recording.h"
#include "render/report.h"
#include "core/util.h"
#include "io/file.h"
#include "io/recfile.h"
#include "io/conffile.h"
#include "tests/tap.h"

#define TAG 0x6a736f6eu /* "json" */
static int bad_frees, live;

static void *tagged_malloc(size_t n)
{
    unsigned char *p = malloc(n + 16);
    if (!p)
        return NULL;
    *(unsigned *)p = TAG;
    live++;
    return p + 16;
}

static void tagged_free(void *q)
{
    if (!q)
        return;
    unsigned char *p = (unsigned char *)q - 16;
    if (*(unsigned *)p != TAG) {
        bad_frees++;
        return;
    }
    *(unsigned *)p = 0;
    live--;
    free(p);
}

static void *failing_malloc(size_t n)
{
    (void)n;
    return NULL;
}

static void one_route(struct bt_config *c)
{
    bt_config_init(c);
    int k = bt_config_add_route(c, "triage");
    bt_strlcpy(c->routes[k].model, "anthropic.claude-3-haiku", sizeof c->routes[k].model);
    c->routes[k].quota[BT_Q_TPM].value = 1000000;
    c->routes[k].quota[BT_Q_TPM].source = BT_QS_CONFIG;
    bt_config_finish(c);
}

/* Every printer of bedtop's own code, on the tagged hooks. */
static void printers(const char *dir)
{
    cJSON_Hooks h = {tagged_malloc, tagged_free};
    cJSON_InitHooks(&h);
    struct bt_buf b = {0};
    bt_quotas_request_json(&b, "tok");
    OK(strstr(bt_buf_str(&b), "\"NextToken\":\"tok\"") != NULL, "Service Quotas request body");
    bt_cloudwatch_list_json(&b, "tok", false, NULL);
    OK(strstr(bt_buf_str(&b), "\"NextToken\":\"tok\"") != NULL, "ListMetrics request body");

    struct bt_config c;
    one_route(&c);
    struct bt_store s;
    bt_store_init(&s, 1, 60);
    char path[300], err[256];
    snprintf(path, sizeof path, "%s/hooks.rec", dir);
    struct bt_recorder *r = bt_recorder_open(path, &c, "live", 1795946400, err, sizeof err);
    OK(r != NULL, "recording header printed and written (%s)", r ? "" : err);
    if (r) {
        bt_recorder_attach(r, &s);
        struct bt_event ev = {.t = 1795946400, .type = BT_EV_ERROR, .route = 0,
                              .source = BT_SRC_CLOUDWATCH};
        bt_strlcpy(ev.text, "timeout", sizeof ev.text);
        bt_model_event(&s, c.routes, &ev);
        OK(bt_recorder_flush(r, 1795946400) == 0, "recording event line printed and written");
        bt_recorder_close(r);
    }
    struct bt_report rep;
    bt_report_build(&rep, &c, &s, 1795946400);
    bt_buf_reset(&b);
    bt_report_render(&rep, BT_FMT_JSON, false, &b);
    OK(strstr(bt_buf_str(&b), "\"routes\"") != NULL, "check --format json printed");
    bt_report_free(&rep);
    bt_buf_free(&b);
    bt_store_free(&s);
    bt_config_free(&c);
    OK(bad_frees == 0, "every cJSON buffer released with cJSON_free (%d were not)", bad_frees);
    OK(live == 0, "nothing cJSON allocated is left (%d blocks)", live);
    cJSON_InitHooks(NULL);
    unlink(path);
}

/* In a child: a print that cannot allocate. Returns its exit status; its stderr in
 * errpath. */
static int out_of_memory(const char *errpath, int what, bool hook)
{
    fflush(stdout);
    pid_t pid = fork();
    if (pid == 0) {
        int fd = open(errpath, O_WRONLY | O_CREAT | O_TRUNC, 0600);
        dup2(fd, 2);
        if (hook)
            bt_set_oom_hook(bt_oom_say); /* as main.c does (app_process_init) */
        struct bt_config c;
        one_route(&c);
        cJSON *j = what == 0 ? cJSON_CreateObject() : NULL; /* before the allocator fails */
        cJSON_AddStringToObject(j, "a", "b");
        cJSON_Hooks h = {failing_malloc, free};
        cJSON_InitHooks(&h);
        struct bt_buf b = {0};
        if (what == 0) {
            bt_buf_json(&b, j, true);
        } else {
            char path[300 + 8], err[256]; /* errpath[300] + ".rec" */
            snprintf(path, sizeof path, "%s.rec", errpath);
            unlink(path);
            bt_recorder_open(path, &c, "live", 1795946400, err, sizeof err);
        }
        _exit(0); /* not reached: the print must fail */
    }
    int st = 0;
    waitpid(pid, &st, 0);
    return st;
}

int main(void)
{
    char dir[] = "/tmp/bedtop-json.XXXXXX";
    if (!mkdtemp(dir))
        return OK(false, "mkdtemp"), tap_done();
    printers(dir);
    char errpath[300];
    snprintf(errpath, sizeof errpath, "%s/err", dir);
    const char *what[] = {"a print", "a recording header"};
    for (int i = 0; i < 2; i++) {
        int st = out_of_memory(errpath, i, true);
        char *msg = bt_read_file(errpath, 4096, NULL);
        OK(WIFEXITED(st) && WEXITSTATUS(st) == 3 && msg && !strcmp(msg, "bedtop: out of memory\n"),
           "%s that cannot allocate: 'bedtop: out of memory', exit 3 (status %d)", what[i], st);
        if (!(WIFEXITED(st) && WEXITSTATUS(st) == 3))
            printf("# stderr: %.600s\n", msg ? msg : "(none)");
        free(msg);
        char rec[320];
        snprintf(rec, sizeof rec, "%s.rec", errpath);
        unlink(rec);
    }
    int st = out_of_memory(errpath, 0, false);
    char *msg = bt_read_file(errpath, 4096, NULL);
    OK(WIFEXITED(st) && WEXITSTATUS(st) == 3 && msg && !*msg,
       "a print that cannot allocate, no hook installed: exit 3, nothing written (status %d)", st);
    free(msg);
    unlink(errpath);
    rmdir(dir);
    return tap_done();
}
