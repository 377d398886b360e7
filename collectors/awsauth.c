/* The AWS credential / Region / endpoint chain, in the AWS CLI's order and with
 * its file formats, so `bedtop --profile x` means what `aws --profile x` means. */
#include "collectors/awsauth.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdarg.h>
#include <pwd.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cjson/cJSON.h>
#include <curl/curl.h>
#include <ini.h>
#include <openssl/crypto.h>

#include "core/util.h"

extern char **environ;

#define MAX_VALUE (16 * 1024)       /* longest shared-file value we keep (tokens are ~2 KB) */
#define MAX_PROCESS_OUT (64 * 1024) /* credential_process stdout bound */
#define MAX_HTTP_BODY (64 * 1024)
#define MAX_ARGS 256
#define PATH_LEN 1024

static int process_timeout_ms = 30000;

void bt_aws_set_process_timeout(int ms)
{
    process_timeout_ms = ms > 0 ? ms : 30000;
}

static void seterr(char *err, size_t errlen, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void seterr(char *err, size_t errlen, const char *fmt, ...)
{
    if (!err || !errlen)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, errlen, fmt, ap);
    va_end(ap);
}

static const char *env_nonempty(const char *name)
{
    const char *v = getenv(name);
    return v && *v ? v : NULL;
}

static bool env_true(const char *name)
{
    const char *v = getenv(name);
    return v && bt_streq_nocase(v, "true");
}

/* Copies s for a message: printable ASCII only, bounded, so outside text cannot forge lines. */
static void safe_copy(char *dst, size_t n, const char *s, size_t maxlen)
{
    size_t j = 0;
    for (size_t i = 0; s && s[i] && i < maxlen && j + 1 < n; i++) {
        unsigned char c = (unsigned char)s[i];
        dst[j++] = (c >= 32 && c < 127) ? (char)c : '?';
    }
    if (n)
        dst[j] = '\0';
}

/* ---- shared files ---------------------------------------------------------------- */

static const char *home_dir(void)
{
    const char *h = env_nonempty("HOME");
    if (h)
        return h;
    struct passwd *pw = getpwuid(getuid());
    return pw && pw->pw_dir ? pw->pw_dir : "/";
}

static void shared_path(const char *envname, const char *file, char *out, size_t n)
{
    const char *v = env_nonempty(envname);
    if (v && v[0] == '~' && (v[1] == '/' || v[1] == '\0'))
        snprintf(out, n, "%s%s", home_dir(), v + 1);
    else if (v)
        snprintf(out, n, "%s", v);
    else
        snprintf(out, n, "%s/.aws/%s", home_dir(), file);
}

void bt_aws_credentials_file(char *out, size_t n)
{
    shared_path("AWS_SHARED_CREDENTIALS_FILE", "credentials", out, n);
}

void bt_aws_config_file(char *out, size_t n)
{
    shared_path("AWS_CONFIG_FILE", "config", out, n);
}

enum { SRC_CREDS, SRC_CONFIG };

/* What one profile says, from both files; [SRC_CREDS] wins over [SRC_CONFIG] as in the CLI. */
struct profile {
    char name[128];
    char path[2][PATH_LEN];
    bool file_exists[2];
    bool section_found[2];
    char *akid[2], *secret[2], *token[2], *process[2];
    char *region, *endpoint_url;
    bool assume_role, sso, web_identity;
    char bad_key[64];     /* a value that was too long */
    int bad_src;
};

static void profile_free(struct profile *p)
{
    for (int i = 0; i < 2; i++) {
        if (p->secret[i])
            OPENSSL_cleanse(p->secret[i], strlen(p->secret[i]));
        if (p->token[i])
            OPENSSL_cleanse(p->token[i], strlen(p->token[i]));
        free(p->akid[i]);
        free(p->secret[i]);
        free(p->token[i]);
        free(p->process[i]);
    }
    free(p->region);
    free(p->endpoint_url);
    memset(p, 0, sizeof *p);
}

struct ini_ctx {
    struct profile *p;
    int src;
};

/* "[profile  prod]" -> "prod" in config; credentials sections are bare names. */
static bool section_matches(const char *section, const char *name, int src)
{
    if (src == SRC_CREDS)
        return strcmp(section, name) == 0;
    if (strcmp(name, "default") == 0 && strcmp(section, "default") == 0)
        return true;
    if (strncmp(section, "profile", 7) != 0 || (section[7] != ' ' && section[7] != '\t'))
        return false;
    const char *s = section + 7;
    while (*s == ' ' || *s == '\t')
        s++;
    return strcmp(s, name) == 0;
}

static void keep(char **slot, const char *value)
{
    free(*slot);
    *slot = bt_xstrdup(value);
}

static int profile_ini_handler(void *user, const char *section, const char *name, const char *value)
{
    struct ini_ctx *ctx = user;
    struct profile *p = ctx->p;
    int s = ctx->src;
    if (!section_matches(section, p->name, s))
        return 1;
    p->section_found[s] = true;
    if (strlen(value) > MAX_VALUE) {
        bt_strlcpy(p->bad_key, name, sizeof p->bad_key);
        p->bad_src = s;
        return 1;
    }
    if (strcmp(name, "aws_access_key_id") == 0)
        keep(&p->akid[s], value);
    else if (strcmp(name, "aws_secret_access_key") == 0)
        keep(&p->secret[s], value);
    else if (strcmp(name, "aws_session_token") == 0)
        keep(&p->token[s], value);
    else if (strcmp(name, "credential_process") == 0)
        keep(&p->process[s], value);
    else if (strcmp(name, "region") == 0 && s == SRC_CONFIG)
        keep(&p->region, value);
    else if (strcmp(name, "endpoint_url") == 0 && s == SRC_CONFIG)
        keep(&p->endpoint_url, value);
    else if (strcmp(name, "role_arn") == 0 || strcmp(name, "source_profile") == 0 ||
             strcmp(name, "credential_source") == 0)
        p->assume_role = true;
    else if (strcmp(name, "sso_start_url") == 0 || strcmp(name, "sso_session") == 0)
        p->sso = true;
    else if (strcmp(name, "web_identity_token_file") == 0)
        p->web_identity = true;
    return 1;
}

/* The shared files hold ~2 KB session tokens and ';' inside commands, so for this parse inih
 * gets a growing heap line buffer and no inline comments (botocore's configparser has none). */
static int parse_ini_file(const char *path, struct ini_ctx *ctx)
{
    bool use_stack = ini_use_stack, allow_realloc = ini_allow_realloc;
    bool inline_comments = ini_allow_inline_comments;
    int max_line = ini_max_line;
    ini_use_stack = false;
    ini_allow_realloc = true;
    ini_max_line = MAX_VALUE * 4;
    ini_allow_inline_comments = false;
    int rc = ini_parse(path, profile_ini_handler, ctx);
    ini_use_stack = use_stack;
    ini_allow_realloc = allow_realloc;
    ini_max_line = max_line;
    ini_allow_inline_comments = inline_comments;
    return rc;
}

/* Loads the profile from both files. -1 + err on unreadable or malformed files. */
static int profile_load(struct profile *p, const char *name, char *err, size_t errlen)
{
    memset(p, 0, sizeof *p);
    bt_strlcpy(p->name, name, sizeof p->name);
    bt_aws_credentials_file(p->path[SRC_CREDS], sizeof p->path[SRC_CREDS]);
    bt_aws_config_file(p->path[SRC_CONFIG], sizeof p->path[SRC_CONFIG]);
    for (int s = 0; s < 2; s++) {
        struct stat st;
        if (stat(p->path[s], &st) != 0) {
            if (errno == ENOENT || errno == ENOTDIR)
                continue;
            seterr(err, errlen, "%s: %s", p->path[s], strerror(errno));
            return -1;
        }
        if (!S_ISREG(st.st_mode)) {
            seterr(err, errlen, "%s: not a regular file", p->path[s]);
            return -1;
        }
        p->file_exists[s] = true;
        struct ini_ctx ctx = {p, s};
        int rc = parse_ini_file(p->path[s], &ctx);
        if (rc < 0) {
            seterr(err, errlen, "%s: cannot read: %s", p->path[s], strerror(errno ? errno : EIO));
            return -1;
        }
        if (rc > 0) {
            seterr(err, errlen, "%s:%d: not a valid INI line (AWS shared %s file)", p->path[s], rc,
                   s == SRC_CREDS ? "credentials" : "config");
            return -1;
        }
        if (p->bad_key[0]) {
            seterr(err, errlen, "%s: value of %s in profile \"%s\" is longer than %d bytes",
                   p->path[p->bad_src], p->bad_key, name, MAX_VALUE);
            return -1;
        }
    }
    return 0;
}

static const char *profile_name(const struct bt_aws_profile_opts *o, bool *explicit_name)
{
    if (o && o->profile && *o->profile) {
        *explicit_name = true;
        return o->profile;
    }
    const char *env = env_nonempty("AWS_PROFILE");
    *explicit_name = env != NULL;
    return env ? env : "default";
}

/* ---- credential checks shared by every source ------------------------------------ */

static bool valid_akid(const char *s)
{
    size_t n = strlen(s);
    if (n == 0 || n >= sizeof ((struct bt_creds *)0)->access_key)
        return false;
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c <= 32 || c >= 127 || c == '/' || c == ',')
            return false;
    }
    return true;
}

/* Token goes into a header: no control characters, bounded. */
static bool valid_token(const char *s)
{
    size_t n = strlen(s);
    if (n > MAX_VALUE)
        return false;
    for (size_t i = 0; i < n; i++) {
        if ((unsigned char)s[i] < 32 || s[i] == 127)
            return false;
    }
    return true;
}

/* Fills c from the pieces; err names `what` (never the values) on a bad piece. */
static int creds_set(struct bt_creds *c, const char *akid, const char *secret, const char *token,
                     const char *what, char *err, size_t errlen)
{
    if (!valid_akid(akid)) {
        seterr(err, errlen, "%s: access key id is empty, too long or has invalid characters", what);
        return -1;
    }
    if (!*secret || strlen(secret) >= sizeof c->secret_key) {
        seterr(err, errlen, "%s: secret access key is empty or too long", what);
        return -1;
    }
    if (token && *token && !valid_token(token)) {
        seterr(err, errlen, "%s: session token is too long or has control characters", what);
        return -1;
    }
    bt_creds_clear(c);
    bt_strlcpy(c->access_key, akid, sizeof c->access_key);
    bt_strlcpy(c->secret_key, secret, sizeof c->secret_key);
    c->session_token = token && *token ? bt_xstrdup(token) : NULL;
    return 0;
}

/* The parsed tree holds the secret: wipe its strings before freeing. */
static void wipe_json_strings(cJSON *node)
{
    for (; node; node = node->next) {
        if (node->valuestring)
            OPENSSL_cleanse(node->valuestring, strlen(node->valuestring));
        wipe_json_strings(node->child);
    }
}

/* Shared by credential_process (token key SessionToken) and container/IMDS (Token). */
static int creds_from_json(const char *json, size_t len, bool process, struct bt_creds *out,
                           const char *what, char *err, size_t errlen)
{
    cJSON *root = cJSON_ParseWithLength(json, len);
    if (!cJSON_IsObject(root)) {
        cJSON_Delete(root);
        seterr(err, errlen, "%s: output is not a JSON object", what);
        return -1;
    }
    int rc = -1;
    if (process) {
        const cJSON *ver = cJSON_GetObjectItemCaseSensitive(root, "Version");
        if (!cJSON_IsNumber(ver)) {
            seterr(err, errlen, "%s: output has no numeric \"Version\" (must be 1)", what);
            goto out;
        }
        if (ver->valuedouble != 1) {
            seterr(err, errlen, "%s: output has Version %g; only Version 1 is supported", what, ver->valuedouble);
            goto out;
        }
    } else {
        const cJSON *code = cJSON_GetObjectItemCaseSensitive(root, "Code");
        if (cJSON_IsString(code) && strcmp(code->valuestring, "Success") != 0) {
            char safe[64];
            safe_copy(safe, sizeof safe, code->valuestring, 60);
            seterr(err, errlen, "%s: credentials not available (Code %s)", what, safe);
            goto out;
        }
    }
    const cJSON *akid = cJSON_GetObjectItemCaseSensitive(root, "AccessKeyId");
    const cJSON *secret = cJSON_GetObjectItemCaseSensitive(root, "SecretAccessKey");
    const cJSON *token = cJSON_GetObjectItemCaseSensitive(root, process ? "SessionToken" : "Token");
    const cJSON *exp = cJSON_GetObjectItemCaseSensitive(root, "Expiration");
    if (!cJSON_IsString(akid) || !cJSON_IsString(secret)) {
        seterr(err, errlen, "%s: output lacks string AccessKeyId and SecretAccessKey", what);
        goto out;
    }
    if (token && !cJSON_IsString(token) && !cJSON_IsNull(token)) {
        seterr(err, errlen, "%s: %s is not a string", what, process ? "SessionToken" : "Token");
        goto out;
    }
    int64_t expiration = 0;
    if (exp && !cJSON_IsNull(exp) &&
        (!cJSON_IsString(exp) || !bt_parse_iso(exp->valuestring, &expiration))) {
        seterr(err, errlen, "%s: Expiration is not an ISO 8601 time", what);
        goto out;
    }
    struct bt_creds got = {0};
    if (creds_set(&got, akid->valuestring, secret->valuestring,
                  cJSON_IsString(token) ? token->valuestring : NULL, what, err, errlen) == 0) {
        got.expiration = expiration;
        bt_strlcpy(got.source, out->source, sizeof got.source);
        bt_creds_copy(out, &got);
        rc = 0;
    }
    bt_creds_clear(&got);
out:
    wipe_json_strings(root);
    cJSON_Delete(root);
    return rc;
}

int bt_aws_parse_process_output(const char *json, size_t len, struct bt_creds *out, char *err, size_t errlen)
{
    if (!json || !out)
        return -1;
    return creds_from_json(json, len, true, out, "credential_process", err, errlen);
}

/* ---- credential_process ------------------------------------------------------------ */

static void free_argv(char **argv)
{
    for (size_t i = 0; argv && argv[i]; i++)
        free(argv[i]);
    free(argv);
}

/* Splits like sh words, without any expansion: '...' literal; "..." where backslash escapes
 * " \ $ ` only; elsewhere backslash escapes the next character. Nothing runs a shell. */
static char **split_command(const char *cmd, char *err, size_t errlen)
{
    char **argv = bt_xcalloc(MAX_ARGS + 1, sizeof *argv);
    size_t argc = 0;
    struct bt_buf word = {0};
    const char *p = cmd;
    for (;;) {
        while (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r')
            p++;
        if (!*p)
            break;
        bt_buf_reset(&word);
        bt_buf_reserve(&word, 0);
        word.buf[0] = '\0';
        while (*p && *p != ' ' && *p != '\t' && *p != '\n' && *p != '\r') {
            if (*p == '\'') {
                const char *e = strchr(p + 1, '\'');
                if (!e) {
                    seterr(err, errlen, "unterminated ' quote");
                    goto fail;
                }
                bt_buf_add(&word, p + 1, (size_t)(e - p - 1));
                p = e + 1;
            } else if (*p == '"') {
                p++;
                while (*p && *p != '"') {
                    if (*p == '\\' && p[1] && strchr("\"\\$`", p[1]))
                        p++;
                    bt_buf_putc(&word, *p++);
                }
                if (*p != '"') {
                    seterr(err, errlen, "unterminated \" quote");
                    goto fail;
                }
                p++;
            } else if (*p == '\\') {
                if (!p[1]) {
                    seterr(err, errlen, "trailing backslash");
                    goto fail;
                }
                bt_buf_putc(&word, p[1]);
                p += 2;
            } else {
                bt_buf_putc(&word, *p++);
            }
        }
        if (argc == MAX_ARGS) {
            seterr(err, errlen, "more than %d arguments", MAX_ARGS);
            goto fail;
        }
        argv[argc++] = bt_xstrdup(word.buf);
    }
    bt_buf_free(&word);
    if (argc == 0) {
        seterr(err, errlen, "empty command");
        free_argv(argv);
        return NULL;
    }
    return argv;
fail:
    bt_buf_free(&word);
    free_argv(argv);
    return NULL;
}

static int64_t mono_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void set_cloexec(int fd)
{
    fcntl(fd, F_SETFD, FD_CLOEXEC);
}

/* Reaps pid within the deadline; kills its process group when time is up. */
static bool reap(pid_t pid, int64_t deadline, int *status)
{
    for (;;) {
        pid_t r = waitpid(pid, status, WNOHANG);
        if (r == pid)
            return true;
        if (r < 0 && errno != EINTR)
            return false;
        if (mono_ms() >= deadline) {
            kill(-pid, SIGKILL);
            while (waitpid(pid, status, 0) < 0 && errno == EINTR)
                ;
            return false;
        }
        struct timespec ts = {0, 10 * 1000 * 1000};
        nanosleep(&ts, NULL);
    }
}

/* Runs argv without a shell in its own process group (so a timeout kills its children too),
 * stdin from /dev/null, stdout bounded, first stderr line kept. 0 with *status, or -1 + err. */
static int run_process(char **argv, struct bt_buf *out, char *errline, size_t errline_n,
                       int *status, char *err, size_t errlen)
{
    int op[2], ep[2];
    if (pipe(op) != 0)
        return seterr(err, errlen, "pipe: %s", strerror(errno)), -1;
    if (pipe(ep) != 0) {
        close(op[0]);
        close(op[1]);
        return seterr(err, errlen, "pipe: %s", strerror(errno)), -1;
    }
    for (int i = 0; i < 2; i++) {
        set_cloexec(op[i]);
        set_cloexec(ep[i]);
    }
    posix_spawn_file_actions_t fa;
    posix_spawnattr_t attr;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_adddup2(&fa, op[1], 1);
    posix_spawn_file_actions_adddup2(&fa, ep[1], 2);
    posix_spawnattr_init(&attr);
    sigset_t none, deflt;
    sigemptyset(&none);
    sigemptyset(&deflt);
    sigaddset(&deflt, SIGPIPE);
    sigaddset(&deflt, SIGINT);
    sigaddset(&deflt, SIGTERM);
    sigaddset(&deflt, SIGCHLD);
    posix_spawnattr_setsigmask(&attr, &none);
    posix_spawnattr_setsigdefault(&attr, &deflt);
    posix_spawnattr_setpgroup(&attr, 0);
    posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
    pid_t pid;
    int rc = posix_spawnp(&pid, argv[0], &fa, &attr, argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    posix_spawnattr_destroy(&attr);
    close(op[1]);
    close(ep[1]);
    if (rc != 0) {
        close(op[0]);
        close(ep[0]);
        return seterr(err, errlen, "cannot run: %s", strerror(rc)), -1;
    }

    int64_t deadline = mono_ms() + process_timeout_ms;
    struct bt_buf errbuf = {0};
    bool open_fd[2] = {true, true}, too_big = false, timed_out = false;
    char chunk[4096];
    while ((open_fd[0] || open_fd[1]) && !too_big) {
        int64_t left = deadline - mono_ms();
        if (left <= 0) {
            timed_out = true;
            break;
        }
        struct pollfd pf[2] = {{open_fd[0] ? op[0] : -1, POLLIN, 0}, {open_fd[1] ? ep[0] : -1, POLLIN, 0}};
        int n = poll(pf, 2, (int)(left > 1000 ? 1000 : left));
        if (n < 0 && errno != EINTR)
            break;
        for (int i = 0; i < 2 && n > 0; i++) {
            if (!(pf[i].revents & (POLLIN | POLLHUP | POLLERR)))
                continue;
            ssize_t r = read(i == 0 ? op[0] : ep[0], chunk, sizeof chunk);
            if (r <= 0) {
                if (r == 0 || (errno != EINTR && errno != EAGAIN))
                    open_fd[i] = false;
                continue;
            }
            if (i == 0 && out->len + (size_t)r > MAX_PROCESS_OUT)
                too_big = true;
            else if (i == 0)
                bt_buf_add(out, chunk, (size_t)r);
            else if (errbuf.len < 4096)
                bt_buf_add(&errbuf, chunk, (size_t)r);
        }
    }
    close(op[0]);
    close(ep[0]);
    if (too_big || timed_out)
        kill(-pid, SIGKILL);
    bool reaped = reap(pid, timed_out || too_big ? mono_ms() : deadline, status);
    if (!reaped && !too_big)
        timed_out = true;
    errline[0] = '\0';
    if (errbuf.len) {
        size_t n = strcspn(errbuf.buf, "\r\n");
        errbuf.buf[n] = '\0';
        safe_copy(errline, errline_n, errbuf.buf, 200);
    }
    bt_buf_free(&errbuf);
    if (too_big)
        return seterr(err, errlen, "printed more than %d KiB", MAX_PROCESS_OUT / 1024), -1;
    if (timed_out)
        return seterr(err, errlen, "timed out after %d ms and was killed", process_timeout_ms), -1;
    return 0;
}

/* Runs a credential_process command line; err names the command's first word and at most the
 * first stderr line, never its stdout (that holds the secret). */
static int credential_process(const char *cmd, const char *where, struct bt_creds *out, char *err, size_t errlen)
{
    char why[256];
    char **argv = split_command(cmd, why, sizeof why);
    if (!argv) {
        seterr(err, errlen, "credential_process (%s): cannot parse the command: %s", where, why);
        return -1;
    }
    char name[96];
    safe_copy(name, sizeof name, argv[0], 80);
    struct bt_buf so = {0};
    char errline[256];
    int status = 0;
    int rc = run_process(argv, &so, errline, sizeof errline, &status, why, sizeof why);
    free_argv(argv);
    if (rc == 0 && WIFSIGNALED(status)) {
        snprintf(why, sizeof why, "killed by signal %d", WTERMSIG(status));
        rc = -1;
    } else if (rc == 0 && WIFEXITED(status) && WEXITSTATUS(status) != 0) {
        snprintf(why, sizeof why, "exited with status %d%s%s", WEXITSTATUS(status),
                 errline[0] ? ": " : "", errline);
        rc = -1;
    }
    if (rc == 0) {
        char what[192];
        snprintf(what, sizeof what, "credential_process \"%s\" (%s)", name, where);
        snprintf(out->source, sizeof out->source, "credential_process (%s)", where);
        rc = creds_from_json(so.buf ? so.buf : "", so.len, true, out, what, err, errlen);
    } else {
        seterr(err, errlen, "credential_process \"%s\" (%s) %s", name, where, why);
    }
    if (so.buf)
        OPENSSL_cleanse(so.buf, so.len);
    bt_buf_free(&so);
    return rc;
}

/* ---- HTTP: container credentials and IMDSv2 ---------------------------------------- */

struct sink {
    struct bt_buf b;
    bool overflow;
};

static size_t sink_write(char *ptr, size_t size, size_t nmemb, void *user)
{
    struct sink *s = user;
    size_t n = size * nmemb;
    if (s->b.len + n > MAX_HTTP_BODY) {
        s->overflow = true;
        return 0;
    }
    bt_buf_add(&s->b, ptr, n);
    return n;
}

/* Credential fetches are rare (start-up, then about hourly before expiry), so a blocking easy
 * handle with short timeouts (1 s connect, 3 s total, no retries) is simpler and safer than
 * joining the main multi loop; the worst case stalls the screen 3 s once an hour.
 * Returns the HTTP status, or -1 + err. Never goes through a proxy, never follows redirects. */
static long http_fetch(const char *method, const char *url, struct curl_slist *hdrs, struct sink *body,
                       char *err, size_t errlen)
{
    CURL *h = curl_easy_init();
    if (!h)
        return seterr(err, errlen, "curl_easy_init failed"), -1;
    char curlerr[CURL_ERROR_SIZE] = "";
    curl_easy_setopt(h, CURLOPT_URL, url);
    curl_easy_setopt(h, CURLOPT_CUSTOMREQUEST, method);
    curl_easy_setopt(h, CURLOPT_HTTPHEADER, hdrs);
    curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, sink_write);
    curl_easy_setopt(h, CURLOPT_WRITEDATA, body);
    curl_easy_setopt(h, CURLOPT_ERRORBUFFER, curlerr);
    curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT_MS, 1000L);
    curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, 3000L);
    curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(h, CURLOPT_NOPROXY, "*");
    curl_easy_setopt(h, CURLOPT_FOLLOWLOCATION, 0L);
    curl_easy_setopt(h, CURLOPT_PROTOCOLS_STR, "http,https");
    curl_easy_setopt(h, CURLOPT_USERAGENT, "bedtop/" BEDTOP_VERSION);
    CURLcode rc = curl_easy_perform(h);
    long status = -1;
    if (rc == CURLE_OK) {
        curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &status);
    } else if (body->overflow) {
        seterr(err, errlen, "response larger than %d KiB", MAX_HTTP_BODY / 1024);
    } else {
        seterr(err, errlen, "%s", curlerr[0] ? curlerr : curl_easy_strerror(rc));
    }
    curl_easy_cleanup(h);
    return status;
}

static void sink_free(struct sink *s)
{
    if (s->b.buf)
        OPENSSL_cleanse(s->b.buf, s->b.len);
    bt_buf_free(&s->b);
}

/* The SDKs only send the container token over http to these hosts (or anywhere over https). */
static bool container_host_allowed(const char *url)
{
    if (strncmp(url, "https://", 8) == 0)
        return true;
    if (strncmp(url, "http://", 7) != 0)
        return false;
    CURLU *u = curl_url();
    char *host = NULL;
    bool ok = u && curl_url_set(u, CURLUPART_URL, url, 0) == CURLUE_OK &&
              curl_url_get(u, CURLUPART_HOST, &host, 0) == CURLUE_OK && host;
    if (ok) {
        ok = strncmp(host, "127.", 4) == 0 || strcmp(host, "localhost") == 0 ||
             strcmp(host, "[::1]") == 0 || strcmp(host, "169.254.170.2") == 0 ||
             strcmp(host, "169.254.170.23") == 0 || strcmp(host, "[fd00:ec2::23]") == 0;
    }
    curl_free(host);
    curl_url_cleanup(u);
    return ok;
}

/* Container credentials (ECS task role, EKS Pod Identity). 1 = not configured. */
static int container_creds(struct bt_creds *out, char *err, size_t errlen)
{
    const char *full = env_nonempty("AWS_CONTAINER_CREDENTIALS_FULL_URI");
    const char *rel = env_nonempty("AWS_CONTAINER_CREDENTIALS_RELATIVE_URI");
    if (!full && !rel)
        return 1;
    char url[2048];
    if (rel)
        snprintf(url, sizeof url, "http://169.254.170.2%s%s", rel[0] == '/' ? "" : "/", rel);
    else
        snprintf(url, sizeof url, "%s", full);
    char safe_url[256];
    safe_copy(safe_url, sizeof safe_url, url, 200);
    if (!rel && !container_host_allowed(url)) {
        seterr(err, errlen, "container credentials: AWS_CONTAINER_CREDENTIALS_FULL_URI %s is not https "
               "and not a loopback or container-agent address; refusing to send credentials there", safe_url);
        return -1;
    }
    char *token = NULL;
    const char *tfile = env_nonempty("AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE");
    if (tfile) {
        token = bt_read_file(tfile, MAX_VALUE, NULL);
        if (!token) {
            seterr(err, errlen, "container credentials: cannot read AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE %s: %s",
                   tfile, strerror(errno));
            return -1;
        }
        token[strcspn(token, "\r\n")] = '\0';
    } else if (env_nonempty("AWS_CONTAINER_AUTHORIZATION_TOKEN")) {
        token = bt_xstrdup(getenv("AWS_CONTAINER_AUTHORIZATION_TOKEN"));
    }
    if (token && !valid_token(token)) {
        OPENSSL_cleanse(token, strlen(token));
        free(token);
        seterr(err, errlen, "container credentials: authorization token has control characters");
        return -1;
    }
    struct curl_slist *hdrs = NULL;
    struct bt_buf auth = {0};
    if (token) {
        bt_buf_printf(&auth, "Authorization: %s", token);
        hdrs = curl_slist_append(hdrs, auth.buf);
        OPENSSL_cleanse(token, strlen(token));
        free(token);
    }
    struct sink body = {0};
    char why[256];
    long status = http_fetch("GET", url, hdrs, &body, why, sizeof why);
    curl_slist_free_all(hdrs);
    if (auth.buf)
        OPENSSL_cleanse(auth.buf, auth.len);
    bt_buf_free(&auth);
    int rc = -1;
    char what[320];
    snprintf(what, sizeof what, "container credentials (%s)", safe_url);
    if (status < 0)
        seterr(err, errlen, "%s: %s", what, why);
    else if (status != 200)
        seterr(err, errlen, "%s: HTTP %ld", what, status);
    else {
        snprintf(out->source, sizeof out->source, "container credentials (%s)", safe_url);
        rc = creds_from_json(body.b.buf ? body.b.buf : "", body.b.len, false, out, what, err, errlen);
    }
    sink_free(&body);
    return rc;
}

/* IMDSv2: PUT a session token, then GET the role name and its credentials with it.
 * 1 = not reachable (the normal case off EC2; reason in err), -1 = reachable but failed. */
static int imds_creds(struct bt_creds *out, char *err, size_t errlen)
{
    char base[512];
    const char *ep = env_nonempty("AWS_EC2_METADATA_SERVICE_ENDPOINT");
    bt_strlcpy(base, ep ? ep : "http://169.254.169.254", sizeof base);
    size_t bl = strlen(base);
    while (bl && base[bl - 1] == '/')
        base[--bl] = '\0';
    char safe_base[200];
    safe_copy(safe_base, sizeof safe_base, base, 160);

    char url[1024], why[256];
    struct sink body = {0};
    struct curl_slist *hdrs = curl_slist_append(NULL, "X-aws-ec2-metadata-token-ttl-seconds: 21600");
    snprintf(url, sizeof url, "%s/latest/api/token", base);
    long status = http_fetch("PUT", url, hdrs, &body, why, sizeof why);
    curl_slist_free_all(hdrs);
    if (status < 0) {
        seterr(err, errlen, "%s: %s", safe_base, why);
        sink_free(&body);
        return 1;
    }
    int rc = -1;
    struct bt_buf tok = {0};
    if (status != 200 || !body.b.len || !valid_token(bt_buf_str(&body.b))) {
        seterr(err, errlen, "IMDSv2 (%s): token request got HTTP %ld", safe_base, status);
        goto done;
    }
    bt_buf_printf(&tok, "X-aws-ec2-metadata-token: %s", bt_trim(body.b.buf));
    sink_free(&body);
    hdrs = curl_slist_append(NULL, tok.buf);

    snprintf(url, sizeof url, "%s/latest/meta-data/iam/security-credentials/", base);
    status = http_fetch("GET", url, hdrs, &body, why, sizeof why);
    if (status != 200 || !body.b.len) {
        if (status < 0)
            seterr(err, errlen, "IMDSv2 (%s): role list: %s", safe_base, why);
        else
            seterr(err, errlen, "IMDSv2 (%s): no instance role (HTTP %ld)", safe_base, status);
        curl_slist_free_all(hdrs);
        goto done;
    }
    char role[256];
    body.b.buf[strcspn(body.b.buf, "\r\n")] = '\0';
    safe_copy(role, sizeof role, bt_trim(body.b.buf), 128);
    sink_free(&body);
    if (!role[0] || strpbrk(role, "/?#%")) {
        seterr(err, errlen, "IMDSv2 (%s): unusable role name", safe_base);
        curl_slist_free_all(hdrs);
        goto done;
    }
    snprintf(url, sizeof url, "%s/latest/meta-data/iam/security-credentials/%s", base, role);
    status = http_fetch("GET", url, hdrs, &body, why, sizeof why);
    curl_slist_free_all(hdrs);
    char what[512];
    snprintf(what, sizeof what, "IMDSv2 (%s) role %s", safe_base, role);
    if (status < 0)
        seterr(err, errlen, "%s: %s", what, why);
    else if (status != 200)
        seterr(err, errlen, "%s: HTTP %ld", what, status);
    else {
        snprintf(out->source, sizeof out->source, "IMDSv2 role %s", role);
        rc = creds_from_json(body.b.buf ? body.b.buf : "", body.b.len, false, out, what, err, errlen);
    }
done:
    if (tok.buf)
        OPENSSL_cleanse(tok.buf, tok.len);
    bt_buf_free(&tok);
    sink_free(&body);
    return rc;
}

/* ---- the chain --------------------------------------------------------------------- */

static void describe_file(struct bt_buf *b, const struct profile *p, int s)
{
    bt_buf_puts(b, p->path[s]);
    if (!p->file_exists[s])
        bt_buf_puts(b, " (not found)");
    else if (!p->section_found[s])
        bt_buf_puts(b, " (no such profile)");
    else
        bt_buf_puts(b, " (no keys)");
}

/* Static keys and credential_process from the profile. 1 = none there. */
static int profile_creds(const struct profile *p, struct bt_creds *out, char *err, size_t errlen)
{
    for (int s = 0; s < 2; s++) {
        if (!p->akid[s] && !p->secret[s])
            continue;
        char what[PATH_LEN + 160];
        snprintf(what, sizeof what, "profile \"%s\" in %s", p->name, p->path[s]);
        if (!p->akid[s] || !p->secret[s]) {
            seterr(err, errlen, "%s has %s but no %s", what,
                   p->akid[s] ? "aws_access_key_id" : "aws_secret_access_key",
                   p->akid[s] ? "aws_secret_access_key" : "aws_access_key_id");
            return -1;
        }
        if (creds_set(out, p->akid[s], p->secret[s], p->token[s], what, err, errlen) != 0)
            return -1;
        snprintf(out->source, sizeof out->source, "profile %s (%s)", p->name, p->path[s]);
        return 0;
    }
    for (int s = 0; s < 2; s++) {
        if (!p->process[s])
            continue;
        char where[PATH_LEN + 160];
        snprintf(where, sizeof where, "profile %s in %s", p->name, p->path[s]);
        return credential_process(p->process[s], where, out, err, errlen);
    }
    return 1;
}

int bt_aws_resolve_creds(const struct bt_aws_profile_opts *o, struct bt_creds *out, char *err, size_t errlen)
{
    if (!out)
        return -1;
    bool explicit_name;
    const char *name = profile_name(o, &explicit_name);
    bool flag_given = o && o->profile && *o->profile;
    struct bt_buf tried = {0};
    struct bt_creds got = {0};
    int rc = -1;

    if (!flag_given) {
        const char *akid = env_nonempty("AWS_ACCESS_KEY_ID");
        const char *secret = env_nonempty("AWS_SECRET_ACCESS_KEY");
        if (akid || secret) {
            if (!akid || !secret) {
                seterr(err, errlen, "environment: %s is set but %s is not",
                       akid ? "AWS_ACCESS_KEY_ID" : "AWS_SECRET_ACCESS_KEY",
                       akid ? "AWS_SECRET_ACCESS_KEY" : "AWS_ACCESS_KEY_ID");
                goto out;
            }
            if (creds_set(&got, akid, secret, getenv("AWS_SESSION_TOKEN"), "environment", err, errlen) != 0)
                goto out;
            const char *exp = env_nonempty("AWS_CREDENTIAL_EXPIRATION");
            if (exp && !bt_parse_iso(exp, &got.expiration)) {
                seterr(err, errlen, "environment: AWS_CREDENTIAL_EXPIRATION is not an ISO 8601 time");
                goto out;
            }
            bt_strlcpy(got.source, "environment", sizeof got.source);
            rc = 0;
            goto out;
        }
        bt_buf_puts(&tried, "environment");
    } else {
        bt_buf_puts(&tried, "environment (skipped: --profile given)");
    }

    /* Web identity (EKS IRSA) comes next in the CLI chain; IMDS would hand out the node's role. */
    if (!flag_given && env_nonempty("AWS_ROLE_ARN") && env_nonempty("AWS_WEB_IDENTITY_TOKEN_FILE")) {
        seterr(err, errlen, "AWS_ROLE_ARN and AWS_WEB_IDENTITY_TOKEN_FILE are set (web identity), which "
               "bedtop does not support; use EKS Pod Identity (container credentials) or credential_process");
        goto out;
    }

    struct profile p;
    if (profile_load(&p, name, err, errlen) != 0) {
        profile_free(&p);
        goto out;
    }
    bool found = p.section_found[SRC_CREDS] || p.section_found[SRC_CONFIG];
    if (explicit_name && !found) {
        seterr(err, errlen, "profile \"%s\" (from %s) not found in %s or %s", name,
               flag_given ? "--profile" : "AWS_PROFILE", p.path[SRC_CREDS], p.path[SRC_CONFIG]);
        profile_free(&p);
        goto out;
    }
    /* The CLI ranks these above the profile's static keys: using the keys instead would
     * silently pick another identity, so say what is unsupported. */
    if (p.assume_role || p.sso || p.web_identity) {
        seterr(err, errlen, "profile \"%s\" uses %s, which bedtop does not support; export keys with "
               "`aws configure export-credentials --profile %s --format env` or use credential_process",
               name, p.assume_role ? "role_arn/source_profile (assume role)"
                     : p.sso ? "IAM Identity Center (SSO)" : "web_identity_token_file", name);
        profile_free(&p);
        goto out;
    }
    int prc = profile_creds(&p, &got, err, errlen);
    if (prc <= 0) {
        profile_free(&p);
        rc = prc;
        goto out;
    }
    bt_buf_printf(&tried, ", profile \"%s\" in ", name);
    describe_file(&tried, &p, SRC_CREDS);
    bt_buf_puts(&tried, " and ");
    describe_file(&tried, &p, SRC_CONFIG);
    profile_free(&p);

    int crc = container_creds(&got, err, errlen);
    if (crc <= 0) {
        rc = crc;
        goto out;
    }
    bt_buf_puts(&tried, ", container credentials (not configured)");

    if (env_true("AWS_EC2_METADATA_DISABLED")) {
        bt_buf_puts(&tried, ", IMDSv2 (disabled)");
    } else {
        char why[512];
        int irc = imds_creds(&got, why, sizeof why);
        if (irc == 0) {
            rc = 0;
            goto out;
        }
        if (irc < 0) {
            seterr(err, errlen, "%s", why);
            goto out;
        }
        bt_buf_printf(&tried, ", IMDSv2 (%s)", why);
    }
    seterr(err, errlen, "no AWS credentials: tried %s", bt_buf_str(&tried));
out:
    if (rc == 0)
        bt_creds_copy(out, &got);
    bt_creds_clear(&got);
    bt_buf_free(&tried);
    return rc;
}

/* ---- Region and endpoints ------------------------------------------------------------ */

static bool valid_region(const char *s)
{
    size_t n = strlen(s);
    if (n == 0 || n > 63)
        return false;
    for (size_t i = 0; i < n; i++) {
        char c = s[i];
        if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-'))
            return false;
    }
    return true;
}

int bt_aws_resolve_region(const struct bt_aws_profile_opts *o, char *out, size_t n, char *err, size_t errlen)
{
    const char *from = NULL, *val = NULL;
    char *owned = NULL;
    bool explicit_name;
    const char *name = profile_name(o, &explicit_name);
    char cfg[PATH_LEN];
    bt_aws_config_file(cfg, sizeof cfg);
    if (o && o->region && *o->region) {
        val = o->region;
        from = "--region";
    } else if (env_nonempty("AWS_REGION")) {
        val = getenv("AWS_REGION");
        from = "AWS_REGION";
    } else if (env_nonempty("AWS_DEFAULT_REGION")) {
        val = getenv("AWS_DEFAULT_REGION");
        from = "AWS_DEFAULT_REGION";
    } else {
        struct profile p;
        char perr[512];
        if (profile_load(&p, name, perr, sizeof perr) != 0) {
            profile_free(&p);
            seterr(err, errlen, "%s", perr);
            return -1;
        }
        if (p.region && *p.region)
            owned = bt_xstrdup(p.region);
        profile_free(&p);
        val = owned;
        from = "the profile";
    }
    if (!val) {
        seterr(err, errlen, "no AWS Region: use --region, AWS_REGION or AWS_DEFAULT_REGION, or set region in "
               "profile \"%s\" (%s)", name, cfg);
        return -1;
    }
    char safe[80];
    safe_copy(safe, sizeof safe, val, 70);
    int rc = 0;
    if (!valid_region(val)) {
        if (owned)
            seterr(err, errlen, "region \"%s\" in profile \"%s\" (%s) is not a Region name", safe, name, cfg);
        else
            seterr(err, errlen, "region \"%s\" from %s is not a Region name", safe, from);
        rc = -1;
    } else if (bt_strlcpy(out, val, n) >= n) {
        seterr(err, errlen, "region \"%s\" is too long", safe);
        rc = -1;
    }
    free(owned);
    return rc;
}

/* Service id -> its AWS_ENDPOINT_URL_<ID> variable (the CLI's documented names). */
static const struct {
    const char *service;
    const char *env;
} service_env[] = {
    {"monitoring", "AWS_ENDPOINT_URL_CLOUDWATCH"},
    {"servicequotas", "AWS_ENDPOINT_URL_SERVICE_QUOTAS"},
    {"bedrock", "AWS_ENDPOINT_URL_BEDROCK"},
    {"sts", "AWS_ENDPOINT_URL_STS"},
};

static int put_endpoint(const char *url, char *out, size_t n)
{
    if (strncmp(url, "http://", 7) != 0 && strncmp(url, "https://", 8) != 0)
        return -1;
    size_t len = strlen(url);
    while (len > 8 && url[len - 1] == '/')
        len--;
    if (len >= n)
        return -1;
    memcpy(out, url, len);
    out[len] = '\0';
    return 0;
}

int bt_aws_endpoint(const struct bt_aws_profile_opts *o, const char *service, const char *region, char *out, size_t n)
{
    if (!service || !*service || !out || !n)
        return -1;
    if (o && o->endpoint_url && *o->endpoint_url)
        return put_endpoint(o->endpoint_url, out, n);
    if (!env_true("AWS_IGNORE_CONFIGURED_ENDPOINT_URLS")) {
        for (size_t i = 0; i < BT_ARRAY_LEN(service_env); i++) {
            if (strcmp(service, service_env[i].service) == 0 && env_nonempty(service_env[i].env))
                return put_endpoint(getenv(service_env[i].env), out, n);
        }
        if (env_nonempty("AWS_ENDPOINT_URL"))
            return put_endpoint(getenv("AWS_ENDPOINT_URL"), out, n);
        bool explicit_name;
        struct profile p;
        char perr[512];
        int lrc = profile_load(&p, profile_name(o, &explicit_name), perr, sizeof perr);
        int rc = 1;
        if (lrc == 0 && p.endpoint_url && *p.endpoint_url)
            rc = put_endpoint(p.endpoint_url, out, n);
        profile_free(&p);
        if (rc <= 0)
            return rc;
    }
    if (!region || !valid_region(region))
        return -1;
    int w = snprintf(out, n, "https://%s.%s.amazonaws.com%s", service, region,
                     strncmp(region, "cn-", 3) == 0 ? ".cn" : "");
    return w > 0 && (size_t)w < n ? 0 : -1;
}

bool bt_creds_need_refresh(const struct bt_creds *c, int64_t now, int margin)
{
    return c && c->expiration != 0 && now + margin >= c->expiration;
}

bool bt_aws_check_file_perms(const char *path, char *msg, size_t n)
{
    struct stat st;
    if (!path || stat(path, &st) != 0 || !(st.st_mode & 077))
        return false;
    seterr(msg, n, "%s is accessible by group/others (mode %04o): run chmod 600 %s", path,
           (unsigned)(st.st_mode & 07777), path);
    return true;
}
