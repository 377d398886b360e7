/* The AWS credential / Region / endpoint chain, in the AWS CLI's order and with
 * its file formats, so `bedtop --profile x` means what `aws --profile x` means. */
#include "aws/awsauth.h"

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

#include "net/http.h"
#include "aws/sts.h"
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

/* Keys of a profile (or an sso-session section) beyond static keys. */
enum { K_ROLE_ARN, K_SOURCE_PROFILE, K_CRED_SOURCE, K_SESSION_NAME, K_EXTERNAL_ID, K_DURATION,
       K_MFA_SERIAL, K_WEB_TOKEN_FILE, K_SSO_SESSION, K_SSO_START_URL, K_SSO_REGION, K_SSO_ACCOUNT,
       K_SSO_ROLE, K_SSO_SCOPES, K_STS_REGIONAL, NKEYS };
static const char *const key_names[NKEYS] = {
    "role_arn", "source_profile", "credential_source", "role_session_name", "external_id",
    "duration_seconds", "mfa_serial", "web_identity_token_file", "sso_session", "sso_start_url",
    "sso_region", "sso_account_id", "sso_role_name", "sso_registration_scopes",
    "sts_regional_endpoints",
};

/* What one profile says, from both files; [SRC_CREDS] wins over [SRC_CONFIG] as in the CLI. */
struct profile {
    char name[128];
    char path[2][PATH_LEN];
    bool file_exists[2];
    bool section_found[2];
    char *akid[2], *secret[2], *token[2], *process[2];
    char *region, *endpoint_url;
    char *kv[2][NKEYS];   /* the other keys the chain reads (role_arn, sso_*, ...) */
    char *sso_kv[NKEYS];  /* from [sso-session NAME] when the profile names one */
    bool sso_section_found;
    char bad_key[64];     /* a value that was too long */
    int bad_src;
};

/* A key of either file (the credentials file wins, as in botocore's merged profile). */
static const char *pget(const struct profile *p, int k)
{
    const char *v = p->kv[SRC_CREDS][k] ? p->kv[SRC_CREDS][k] : p->kv[SRC_CONFIG][k];
    return v && *v ? v : NULL;
}

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
        for (int k = 0; k < NKEYS; k++)
            free(p->kv[i][k]);
    }
    for (int k = 0; k < NKEYS; k++)
        free(p->sso_kv[k]);
    free(p->region);
    free(p->endpoint_url);
    memset(p, 0, sizeof *p);
}

struct ini_ctx {
    struct profile *p;
    int src;
    const char *sso_session;   /* second pass over the config: this [sso-session NAME] */
};

static bool sso_section_matches(const char *section, const char *name)
{
    if (strncmp(section, "sso-session", 11) != 0 || (section[11] != ' ' && section[11] != '\t'))
        return false;
    const char *s = section + 11;
    while (*s == ' ' || *s == '\t')
        s++;
    return strcmp(s, name) == 0;
}

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
    if (ctx->sso_session) {
        if (!sso_section_matches(section, ctx->sso_session))
            return 1;
        p->sso_section_found = true;
        for (int k = 0; k < NKEYS; k++)
            if (strcmp(name, key_names[k]) == 0 && strlen(value) <= MAX_VALUE)
                keep(&p->sso_kv[k], value);
        return 1;
    }
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
    else
        for (int k = 0; k < NKEYS; k++)
            if (strcmp(name, key_names[k]) == 0)
                keep(&p->kv[s][k], value);
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
        struct ini_ctx ctx = {p, s, NULL};
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
    const char *sess = pget(p, K_SSO_SESSION);
    if (sess && p->file_exists[SRC_CONFIG]) {
        struct ini_ctx ctx = {p, SRC_CONFIG, sess};
        if (parse_ini_file(p->path[SRC_CONFIG], &ctx) != 0) {
            seterr(err, errlen, "%s: cannot read the [sso-session %s] section", p->path[SRC_CONFIG], sess);
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

static int64_t mono_ms(void)
{
    return bt_http_mono_ms();
}

static void set_cloexec(int fd)
{
    fcntl(fd, F_SETFD, FD_CLOEXEC);
}

/* ---- the plan: one source of credentials, then zero or more AssumeRole hops ---------- */

#define MAX_HOPS 16

enum src_kind { S_STATIC, S_PROCESS, S_CONTAINER, S_IMDS, S_SSO, S_WEB };

struct hop {
    char profile[128];
    char role_arn[256], session_name[128], external_id[256], mfa_serial[256];
    int duration;
};

struct plan {
    char top[128];              /* the profile asked for */
    bool explicit_profile;
    enum src_kind kind;
    char src_profile[128];      /* the profile holding the source ("" for the environment) */
    struct bt_creds creds;      /* S_STATIC */
    char *cmd;                  /* S_PROCESS */
    char where[PATH_LEN + 160];
    /* S_SSO */
    char sso_session[128], sso_start_url[512], sso_region[32], sso_account[32], sso_role[128];
    char sso_url[512], oidc_url[512];
    /* S_WEB */
    char token_file[PATH_LEN], web_role_arn[256], web_session[128];
    struct hop hops[MAX_HOPS];  /* hops[0] is assumed with the source's creds, and so on */
    int nhops;
    char sts_url[512], sts_region[32];
    char tried[1024];           /* S_IMDS as the last resort: what was tried before */
};

static void plan_free(struct plan *pl)
{
    bt_creds_clear(&pl->creds);
    free(pl->cmd);
    memset(pl, 0, sizeof *pl);
}

static const char *legacy_global_regions[] = {
    "ap-northeast-1", "ap-south-1", "ap-southeast-1", "ap-southeast-2", "aws-global", "ca-central-1",
    "eu-central-1", "eu-north-1", "eu-west-1", "eu-west-2", "eu-west-3", "sa-east-1", "us-east-1",
    "us-east-2", "us-west-1", "us-west-2",
};

static bool valid_region(const char *s);

/* STS endpoint as botocore picks it: AWS_ENDPOINT_URL_STS, AWS_ENDPOINT_URL, the profile's
 * endpoint_url, else sts.REGION.amazonaws.com (sts_regional_endpoints=regional, the default) or
 * the global sts.amazonaws.com (legacy mode for the legacy Regions, or no Region at all).
 * --endpoint-url is for the dashboard's own services and does not apply, as in the CLI. */
static void plan_sts_endpoint(struct plan *pl, const struct bt_aws_profile_opts *o, const struct profile *top)
{
    const char *region = o && o->region && *o->region ? o->region
                       : env_nonempty("AWS_REGION") ? getenv("AWS_REGION")
                       : env_nonempty("AWS_DEFAULT_REGION") ? getenv("AWS_DEFAULT_REGION")
                       : top->region;
    if (region && !valid_region(region))
        region = NULL;
    const char *mode = env_nonempty("AWS_STS_REGIONAL_ENDPOINTS");
    if (!mode)
        mode = pget(top, K_STS_REGIONAL);
    bool legacy = mode && bt_streq_nocase(mode, "legacy");
    bool global = !region;
    for (size_t i = 0; legacy && region && i < BT_ARRAY_LEN(legacy_global_regions); i++)
        if (strcmp(region, legacy_global_regions[i]) == 0)
            global = true;
    bt_strlcpy(pl->sts_region, global ? "us-east-1" : region, sizeof pl->sts_region);
    struct bt_aws_profile_opts so = {.profile = top->name};
    if (bt_aws_endpoint(&so, "sts", pl->sts_region, pl->sts_url, sizeof pl->sts_url) != 0 || global) {
        char tmp[512];
        if (global && bt_aws_endpoint(&so, "sts", NULL, tmp, sizeof tmp) == 0)
            bt_strlcpy(pl->sts_url, tmp, sizeof pl->sts_url);
        else if (global)
            bt_strlcpy(pl->sts_url, "https://sts.amazonaws.com", sizeof pl->sts_url);
    }
}

static bool has_static(const struct profile *p)
{
    for (int s = 0; s < 2; s++)
        if (p->akid[s] || p->secret[s])
            return true;
    return false;
}

static bool has_assume_role(const struct profile *p)
{
    return pget(p, K_ROLE_ARN) && (pget(p, K_SOURCE_PROFILE) || pget(p, K_CRED_SOURCE));
}

static int plan_static(struct plan *pl, const struct profile *p, char *err, size_t errlen)
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
        if (creds_set(&pl->creds, p->akid[s], p->secret[s], p->token[s], what, err, errlen) != 0)
            return -1;
        snprintf(pl->creds.source, sizeof pl->creds.source, "profile %s (%s)", p->name, p->path[s]);
        pl->kind = S_STATIC;
        bt_strlcpy(pl->src_profile, p->name, sizeof pl->src_profile);
        return 0;
    }
    return 1;
}

static int plan_sso(struct plan *pl, const struct profile *p, char *err, size_t errlen)
{
    const char *sess = pget(p, K_SSO_SESSION);
    const char *start = pget(p, K_SSO_START_URL), *region = pget(p, K_SSO_REGION);
    if (sess) {
        if (!p->sso_section_found) {
            seterr(err, errlen, "profile \"%s\" names sso_session \"%s\" but %s has no [sso-session %s] "
                   "section", p->name, sess, p->path[SRC_CONFIG], sess);
            return -1;
        }
        const char *s_start = p->sso_kv[K_SSO_START_URL], *s_region = p->sso_kv[K_SSO_REGION];
        if ((start && s_start && strcmp(start, s_start) != 0) ||
            (region && s_region && strcmp(region, s_region) != 0)) {
            seterr(err, errlen, "profile \"%s\": sso_start_url/sso_region differ between the profile and "
                   "[sso-session %s]", p->name, sess);
            return -1;
        }
        start = s_start;
        region = s_region;
    }
    const char *account = pget(p, K_SSO_ACCOUNT), *role = pget(p, K_SSO_ROLE);
    const char *missing = !start ? "sso_start_url" : !region ? "sso_region" : !account ? "sso_account_id"
                        : !role ? "sso_role_name" : NULL;
    if (missing) {
        seterr(err, errlen, "profile \"%s\" uses IAM Identity Center but has no %s%s", p->name, missing,
               sess ? " (in the profile or its sso-session)" : "");
        return -1;
    }
    if (!valid_region(region) || strlen(account) >= sizeof pl->sso_account || strlen(role) >= sizeof pl->sso_role ||
        strlen(start) >= sizeof pl->sso_start_url || (sess && strlen(sess) >= sizeof pl->sso_session)) {
        seterr(err, errlen, "profile \"%s\": sso_region, sso_account_id, sso_role_name or sso_start_url is "
               "malformed or too long", p->name);
        return -1;
    }
    pl->kind = S_SSO;
    bt_strlcpy(pl->src_profile, p->name, sizeof pl->src_profile);
    bt_strlcpy(pl->sso_session, sess ? sess : "", sizeof pl->sso_session);
    bt_strlcpy(pl->sso_start_url, start, sizeof pl->sso_start_url);
    bt_strlcpy(pl->sso_region, region, sizeof pl->sso_region);
    bt_strlcpy(pl->sso_account, account, sizeof pl->sso_account);
    bt_strlcpy(pl->sso_role, role, sizeof pl->sso_role);
    struct bt_aws_profile_opts so = {.profile = p->name};
    if (bt_aws_endpoint(&so, "portal.sso", region, pl->sso_url, sizeof pl->sso_url) != 0 ||
        bt_aws_endpoint(&so, "oidc", region, pl->oidc_url, sizeof pl->oidc_url) != 0) {
        seterr(err, errlen, "profile \"%s\": no IAM Identity Center endpoint for Region %s", p->name, region);
        return -1;
    }
    return 0;
}

static int plan_web(struct plan *pl, const char *file, const char *role, const char *session, const char *who,
                    char *err, size_t errlen)
{
    if (strlen(file) >= sizeof pl->token_file || strlen(role) >= sizeof pl->web_role_arn ||
        (session && strlen(session) >= sizeof pl->web_session)) {
        seterr(err, errlen, "%s: web identity token file, role_arn or role_session_name is too long", who);
        return -1;
    }
    pl->kind = S_WEB;
    bt_strlcpy(pl->token_file, file, sizeof pl->token_file);
    bt_strlcpy(pl->web_role_arn, role, sizeof pl->web_role_arn);
    if (session)
        bt_strlcpy(pl->web_session, session, sizeof pl->web_session);
    else
        snprintf(pl->web_session, sizeof pl->web_session, "botocore-session-%lld", (long long)time(NULL));
    return 0;
}

/* botocore's profile providers for a profile without an assume-role pair: web identity, SSO,
 * static keys, credential_process. 1 = none of them configured. */
static int plan_profile_providers(struct plan *pl, const struct profile *p, bool env_web, char *err, size_t errlen)
{
    const char *efile = env_web ? env_nonempty("AWS_WEB_IDENTITY_TOKEN_FILE") : NULL;
    const char *erole = env_web ? env_nonempty("AWS_ROLE_ARN") : NULL;
    const char *file = efile ? efile : pget(p, K_WEB_TOKEN_FILE);
    const char *role = erole ? erole : pget(p, K_ROLE_ARN);
    if (file && role) {
        const char *sess = env_web && env_nonempty("AWS_ROLE_SESSION_NAME") ? getenv("AWS_ROLE_SESSION_NAME")
                         : pget(p, K_SESSION_NAME);
        char who[200];
        snprintf(who, sizeof who, efile ? "AWS_WEB_IDENTITY_TOKEN_FILE" : "profile \"%s\"", p->name);
        bt_strlcpy(pl->src_profile, efile ? "" : p->name, sizeof pl->src_profile);
        return plan_web(pl, file, role, sess, who, err, errlen);
    }
    if (pget(p, K_SSO_SESSION) || pget(p, K_SSO_START_URL) || pget(p, K_SSO_ACCOUNT))
        return plan_sso(pl, p, err, errlen);
    int rc = plan_static(pl, p, err, errlen);
    if (rc <= 0)
        return rc;
    for (int s = 0; s < 2; s++) {
        if (!p->process[s])
            continue;
        pl->kind = S_PROCESS;
        pl->cmd = bt_xstrdup(p->process[s]);
        snprintf(pl->where, sizeof pl->where, "profile %s in %s", p->name, p->path[s]);
        bt_strlcpy(pl->src_profile, p->name, sizeof pl->src_profile);
        return 0;
    }
    return 1;
}

static bool env_static_present(void)
{
    return env_nonempty("AWS_ACCESS_KEY_ID") || env_nonempty("AWS_SECRET_ACCESS_KEY");
}

static int plan_env_static(struct plan *pl, char *err, size_t errlen)
{
    const char *akid = env_nonempty("AWS_ACCESS_KEY_ID");
    const char *secret = env_nonempty("AWS_SECRET_ACCESS_KEY");
    if (!akid || !secret) {
        seterr(err, errlen, "environment: %s is set but %s is not",
               akid ? "AWS_ACCESS_KEY_ID" : "AWS_SECRET_ACCESS_KEY",
               akid ? "AWS_SECRET_ACCESS_KEY" : "AWS_ACCESS_KEY_ID");
        return -1;
    }
    if (creds_set(&pl->creds, akid, secret, getenv("AWS_SESSION_TOKEN"), "environment", err, errlen) != 0)
        return -1;
    const char *exp = env_nonempty("AWS_CREDENTIAL_EXPIRATION");
    if (exp && !bt_parse_iso(exp, &pl->creds.expiration)) {
        seterr(err, errlen, "environment: AWS_CREDENTIAL_EXPIRATION is not an ISO 8601 time");
        return -1;
    }
    bt_strlcpy(pl->creds.source, "environment", sizeof pl->creds.source);
    pl->kind = S_STATIC;
    return 0;
}

/* credential_source = Environment | Ec2InstanceMetadata | EcsContainer */
static int plan_credential_source(struct plan *pl, const struct profile *p, const char *cs, char *err, size_t errlen)
{
    if (strcmp(cs, "Environment") == 0) {
        if (!env_static_present()) {
            seterr(err, errlen, "profile \"%s\": credential_source Environment but AWS_ACCESS_KEY_ID and "
                   "AWS_SECRET_ACCESS_KEY are not set", p->name);
            return -1;
        }
        return plan_env_static(pl, err, errlen);
    }
    if (strcmp(cs, "EcsContainer") == 0) {
        if (!env_nonempty("AWS_CONTAINER_CREDENTIALS_FULL_URI") && !env_nonempty("AWS_CONTAINER_CREDENTIALS_RELATIVE_URI")) {
            seterr(err, errlen, "profile \"%s\": credential_source EcsContainer but neither "
                   "AWS_CONTAINER_CREDENTIALS_RELATIVE_URI nor _FULL_URI is set", p->name);
            return -1;
        }
        pl->kind = S_CONTAINER;
        return 0;
    }
    if (strcmp(cs, "Ec2InstanceMetadata") == 0) {
        if (env_true("AWS_EC2_METADATA_DISABLED")) {
            seterr(err, errlen, "profile \"%s\": credential_source Ec2InstanceMetadata but "
                   "AWS_EC2_METADATA_DISABLED=true", p->name);
            return -1;
        }
        pl->kind = S_IMDS;
        snprintf(pl->tried, sizeof pl->tried, "credential_source of profile \"%s\"", p->name);
        return 0;
    }
    char safe[64];
    safe_copy(safe, sizeof safe, cs, 60);
    seterr(err, errlen, "profile \"%s\": credential_source \"%s\" is not one of Environment, "
           "Ec2InstanceMetadata, EcsContainer", p->name, safe);
    return -1;
}

static int add_hop(struct plan *pl, const struct profile *p, char *err, size_t errlen)
{
    if (pl->nhops >= MAX_HOPS) {
        seterr(err, errlen, "profile \"%s\": role chain longer than %d hops", pl->top, MAX_HOPS);
        return -1;
    }
    /* hops are found from the top down; they run from the source up: shift later */
    struct hop *h = &pl->hops[pl->nhops++];
    memset(h, 0, sizeof *h);
    bt_strlcpy(h->profile, p->name, sizeof h->profile);
    const char *arn = pget(p, K_ROLE_ARN), *sess = pget(p, K_SESSION_NAME);
    const char *ext = pget(p, K_EXTERNAL_ID), *mfa = pget(p, K_MFA_SERIAL), *dur = pget(p, K_DURATION);
    if (strlen(arn) >= sizeof h->role_arn || (sess && strlen(sess) >= sizeof h->session_name) ||
        (ext && strlen(ext) >= sizeof h->external_id) || (mfa && strlen(mfa) >= sizeof h->mfa_serial)) {
        seterr(err, errlen, "profile \"%s\": role_arn, role_session_name, external_id or mfa_serial is too long",
               p->name);
        return -1;
    }
    bt_strlcpy(h->role_arn, arn, sizeof h->role_arn);
    if (sess)
        bt_strlcpy(h->session_name, sess, sizeof h->session_name);
    else
        snprintf(h->session_name, sizeof h->session_name, "botocore-session-%lld", (long long)time(NULL));
    if (ext)
        bt_strlcpy(h->external_id, ext, sizeof h->external_id);
    if (mfa)
        bt_strlcpy(h->mfa_serial, mfa, sizeof h->mfa_serial);
    if (dur) {
        char *end;
        long v = strtol(dur, &end, 10);
        if (*end || v < 900 || v > 43200) {
            seterr(err, errlen, "profile \"%s\": duration_seconds must be 900 to 43200", p->name);
            return -1;
        }
        h->duration = (int)v;
    }
    return 0;
}

/* The assume-role chain from profile p (which has role_arn + source_profile/credential_source),
 * as botocore's AssumeRoleProvider walks it, with its loop rule: a profile may name itself as
 * source only when it has static keys. */
static int plan_assume(struct plan *pl, const struct profile *p, char visited[][128], int nvisited,
                       char *err, size_t errlen)
{
    if (add_hop(pl, p, err, errlen) != 0)
        return -1;
    const char *cs = pget(p, K_CRED_SOURCE), *sp = pget(p, K_SOURCE_PROFILE);
    if (cs && sp) {
        seterr(err, errlen, "profile \"%s\" has both source_profile and credential_source; use one", p->name);
        return -1;
    }
    if (cs)
        return plan_credential_source(pl, p, cs, err, errlen);
    for (int i = 0; i < nvisited; i++) {
        if (strcmp(visited[i], sp) == 0 && !(strcmp(sp, p->name) == 0 && has_static(p))) {
            seterr(err, errlen, "profile \"%s\": source_profile chain loops back to \"%s\"", pl->top, sp);
            return -1;
        }
    }
    if (nvisited >= MAX_HOPS) {
        seterr(err, errlen, "profile \"%s\": role chain longer than %d hops", pl->top, MAX_HOPS);
        return -1;
    }
    if (strcmp(sp, p->name) == 0)
        return plan_static(pl, p, err, errlen) == 0 ? 0 : -1;
    bt_strlcpy(visited[nvisited++], sp, 128);
    struct profile src;
    int rc = profile_load(&src, sp, err, errlen);
    if (rc == 0 && !src.section_found[SRC_CREDS] && !src.section_found[SRC_CONFIG]) {
        seterr(err, errlen, "profile \"%s\": source_profile \"%s\" not found in %s or %s", p->name, sp,
               src.path[SRC_CREDS], src.path[SRC_CONFIG]);
        rc = -1;
    }
    if (rc == 0) {
        if (has_static(&src))
            rc = plan_static(pl, &src, err, errlen);
        else if (!has_assume_role(&src)) {
            rc = plan_profile_providers(pl, &src, false, err, errlen);
            if (rc > 0) {
                seterr(err, errlen, "the source profile \"%s\" (of \"%s\") must have credentials", sp, p->name);
                rc = -1;
            }
        } else {
            rc = plan_assume(pl, &src, visited, nvisited, err, errlen);
        }
    }
    profile_free(&src);
    return rc;
}

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

/* The whole chain, in the AWS CLI's order, decided from the environment and the files
 * (nothing is sent yet). 0 = plan ready, -1 = err. */
static int plan_build(struct plan *pl, const struct bt_aws_profile_opts *o, char *err, size_t errlen)
{
    memset(pl, 0, sizeof *pl);
    bool explicit_name;
    const char *name = profile_name(o, &explicit_name);
    bool flag_given = o && o->profile && *o->profile;
    bt_strlcpy(pl->top, name, sizeof pl->top);
    pl->explicit_profile = flag_given;
    struct bt_buf tried = {0};
    int rc = -1;
    struct profile p;
    memset(&p, 0, sizeof p);
    /* 1. environment keys (not with --profile: an explicit profile negates them, as in botocore) */
    if (!flag_given && env_static_present()) {
        rc = plan_env_static(pl, err, errlen);
        goto out;
    }
    if (profile_load(&p, name, err, errlen) != 0)
        goto out;
    plan_sts_endpoint(pl, o, &p);
    bt_buf_puts(&tried, flag_given ? "environment (skipped: --profile given)" : "environment");
    bool found = p.section_found[SRC_CREDS] || p.section_found[SRC_CONFIG];
    if (explicit_name && !found) {
        seterr(err, errlen, "profile \"%s\" (from %s) not found in %s or %s", name,
               flag_given ? "--profile" : "AWS_PROFILE", p.path[SRC_CREDS], p.path[SRC_CONFIG]);
        goto out;
    }
    /* 2. assume role (role_arn with source_profile or credential_source) */
    if (has_assume_role(&p)) {
        char visited[MAX_HOPS + 1][128];
        bt_strlcpy(visited[0], name, sizeof visited[0]);
        rc = plan_assume(pl, &p, visited, 1, err, errlen);
        goto out;
    }
    /* 3-6. web identity (env unless --profile), SSO, static keys, credential_process */
    int prc = plan_profile_providers(pl, &p, !flag_given, err, errlen);
    if (prc <= 0) {
        rc = prc;
        goto out;
    }
    bt_buf_printf(&tried, ", profile \"%s\" in ", name);
    describe_file(&tried, &p, SRC_CREDS);
    bt_buf_puts(&tried, " and ");
    describe_file(&tried, &p, SRC_CONFIG);
    /* 7. container credentials, 8. IMDSv2 */
    if (env_nonempty("AWS_CONTAINER_CREDENTIALS_FULL_URI") || env_nonempty("AWS_CONTAINER_CREDENTIALS_RELATIVE_URI")) {
        pl->kind = S_CONTAINER;
        rc = 0;
        goto out;
    }
    bt_buf_puts(&tried, ", container credentials (not configured)");
    if (env_true("AWS_EC2_METADATA_DISABLED")) {
        bt_buf_puts(&tried, ", IMDSv2 (disabled)");
        seterr(err, errlen, "no AWS credentials: tried %s", bt_buf_str(&tried));
        goto out;
    }
    pl->kind = S_IMDS;
    bt_strlcpy(pl->tried, bt_buf_str(&tried), sizeof pl->tried);
    rc = 0;
out:
    profile_free(&p);
    bt_buf_free(&tried);
    if (rc == 0) {
        /* run order: the hop nearest the source first */
        for (int i = 0, j = pl->nhops - 1; i < j; i++, j--) {
            struct hop t = pl->hops[i];
            pl->hops[i] = pl->hops[j];
            pl->hops[j] = t;
        }
    } else {
        plan_free(pl);
    }
    return rc;
}

int bt_aws_sts_endpoint(const struct bt_aws_profile_opts *o, char *url, size_t n, char *region, size_t rn)
{
    struct plan pl;
    memset(&pl, 0, sizeof pl);
    struct profile p;
    char err[256];
    bool explicit_name;
    if (profile_load(&p, profile_name(o, &explicit_name), err, sizeof err) != 0) {
        profile_free(&p);
        return -1;
    }
    plan_sts_endpoint(&pl, o, &p);
    profile_free(&p);
    bt_strlcpy(url, pl.sts_url, n);
    bt_strlcpy(region, pl.sts_region, rn);
    return pl.sts_url[0] ? 0 : -1;
}

/* ---- MFA codes ------------------------------------------------------------------------ */

static bt_aws_mfa_prompt_fn mfa_prompt;
static void *mfa_prompt_arg;

void bt_aws_set_mfa_prompt(bt_aws_mfa_prompt_fn fn, void *arg)
{
    mfa_prompt = fn;
    mfa_prompt_arg = arg;
}

/* Credentials of profiles that needed an MFA code, kept so the code is asked once per session
 * (the CLI caches them the same way) and every collector shares them. */
#define MAX_MFA_CACHE 8
static struct { char profile[128]; struct bt_creds creds; } mfa_cache[MAX_MFA_CACHE];

static bool plan_needs_mfa(const struct plan *pl)
{
    for (int i = 0; i < pl->nhops; i++)
        if (pl->hops[i].mfa_serial[0])
            return true;
    return false;
}

static const struct bt_creds *mfa_cached(const char *profile)
{
    int64_t now = (int64_t)time(NULL);
    for (int i = 0; i < MAX_MFA_CACHE; i++)
        if (!strcmp(mfa_cache[i].profile, profile) && mfa_cache[i].creds.access_key[0] &&
            (!mfa_cache[i].creds.expiration || mfa_cache[i].creds.expiration - now > 300))
            return &mfa_cache[i].creds;
    return NULL;
}

static void mfa_store(const char *profile, const struct bt_creds *c)
{
    int slot = 0;
    for (int i = 0; i < MAX_MFA_CACHE; i++) {
        if (!strcmp(mfa_cache[i].profile, profile) || !mfa_cache[i].profile[0]) {
            slot = i;
            break;
        }
    }
    bt_strlcpy(mfa_cache[slot].profile, profile, sizeof mfa_cache[slot].profile);
    bt_creds_copy(&mfa_cache[slot].creds, c);
}

void bt_aws_forget_cached(void)
{
    for (int i = 0; i < MAX_MFA_CACHE; i++) {
        bt_creds_clear(&mfa_cache[i].creds);
        mfa_cache[i].profile[0] = '\0';
    }
}

/* ---- the job: runs a plan inside a bt_http, never blocking --------------------------- */

enum req_kind { R_STS_ASSUME, R_STS_WEB, R_SSO_PORTAL, R_SSO_OIDC, R_CONTAINER, R_IMDS };

struct bt_aws_job {
    struct bt_http *h;
    struct plan pl;
    int hop;                         /* next hop to run */
    struct bt_creds cur;             /* what the last step produced */
    struct bt_creds_provider signer; /* cur, for signing AssumeRole */
    bt_aws_job_cb cb;
    void *arg;
    /* credential_process */
    pid_t pid;
    int status;
    int fd[2];                       /* stdout, stderr read ends; -1 closed */
    struct bt_buf out, errb;
    bool too_big;
    int64_t deadline;
    char name[96];
    /* IMDSv2 */
    int imds_stage;
    char *imds_token;
    char imds_role[160];
    char imds_base[512];
    /* IAM Identity Center */
    char cache_path[PATH_LEN];
    cJSON *cache;                    /* the token cache file, as read */
    enum req_kind req;               /* the one request in flight */
};

static void job_http_cb(void *arg, const struct bt_http_resp *r);

static void process_close_pipes(struct bt_aws_job *j);

/* Kills and reaps a child still running (cancel, or the job ends early). */
static void process_stop(struct bt_aws_job *j)
{
    process_close_pipes(j);
    if (j->pid > 0) {
        kill(-j->pid, SIGKILL);
        while (waitpid(j->pid, &j->status, 0) < 0 && errno == EINTR)
            ;
        j->pid = 0;
    }
}

static void wipe_buf(struct bt_buf *b)
{
    if (b->buf)
        OPENSSL_cleanse(b->buf, b->len);
    bt_buf_free(b);
}

static void job_free(struct bt_aws_job *j)
{
    process_stop(j);
    bt_http_cancel(j->h, job_http_cb, j);
    plan_free(&j->pl);
    bt_creds_clear(&j->cur);
    bt_creds_clear(&j->signer.creds);
    wipe_buf(&j->out);
    wipe_buf(&j->errb);
    if (j->imds_token) {
        OPENSSL_cleanse(j->imds_token, strlen(j->imds_token));
        free(j->imds_token);
    }
    if (j->cache) {
        wipe_json_strings(j->cache);
        cJSON_Delete(j->cache);
    }
    free(j);
}

void bt_aws_job_cancel(struct bt_aws_job *j)
{
    if (j)
        job_free(j);
}

static void job_fail(struct bt_aws_job *j, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void job_fail(struct bt_aws_job *j, const char *fmt, ...)
{
    char err[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, sizeof err, fmt, ap);
    va_end(ap);
    j->cb(j->arg, NULL, err);
    job_free(j);
}

static void job_next(struct bt_aws_job *j);

/* A step produced credentials: on to the next hop, or done. */
static void job_got(struct bt_aws_job *j, const struct bt_creds *c)
{
    bt_creds_copy(&j->cur, c);
    job_next(j);
}

/* what to call a request in errors: "profile \"x\" role arn:..." */
static void hop_what(const struct hop *h, char *out, size_t n)
{
    snprintf(out, n, "profile \"%s\": AssumeRole %s", h->profile, h->role_arn);
}

/* A job has one request in flight at a time; its kind says who reads the answer. */
static int job_submit(struct bt_aws_job *j, enum req_kind kind, struct bt_http_req *req)
{
    j->req = kind;
    return bt_http_submit(j->h, req, job_http_cb, j);
}

/* ---- STS ---- */

static void sts_answer(struct bt_aws_job *j, const struct bt_http_resp *r, const char *what, const char *prof)
{
    struct bt_sts_result res;
    if (r->status == 0) {
        job_fail(j, "%s: %s (%s)", what, r->transport_error, r->url ? r->url : "");
        return;
    }
    int prc = bt_sts_parse(r->body, r->body_len, &res);
    if (prc == 1 || r->status >= 300) {
        char msg[200];
        safe_copy(msg, sizeof msg, res.message[0] ? res.message : r->error_message, 160);
        const char *code = res.code[0] ? res.code : r->error_code[0] ? r->error_code : "error";
        /* the known codes get what to do instead of AWS's longer sentence */
        const char *hint = !strcmp(code, "ExpiredToken") || !strcmp(code, "ExpiredTokenException")
                               ? "the source credentials have expired; renew them"
                         : !strcmp(code, "RegionDisabledException")
                               ? "activate STS in this Region (IAM console) or set another region"
                         : !strcmp(code, "AccessDenied") ? "check the role's trust policy and external_id"
                         : !strcmp(code, "InvalidIdentityToken") ? "the web identity token was refused" : "";
        if (hint[0])
            job_fail(j, "%s: %s; %s", what, code, hint);
        else
            job_fail(j, "%s: %s%s%s", what, code, msg[0] ? ": " : "", msg);
        bt_sts_result_clear(&res);
        return;
    }
    if (prc < 0 || !res.creds.access_key[0]) {
        job_fail(j, "%s: unreadable STS answer: %s", what, res.message);
        bt_sts_result_clear(&res);
        return;
    }
    char account[16] = "?", role[128] = "?";
    bt_arn_identity(res.arn, account, sizeof account, role, sizeof role);
    if (strcmp(prof, "environment") == 0)
        snprintf(res.creds.source, sizeof res.creds.source, "account %s role %s (web identity, "
                 "AWS_WEB_IDENTITY_TOKEN_FILE)", account, role);
    else
        snprintf(res.creds.source, sizeof res.creds.source, "account %s role %s (%s, profile %s)", account, role,
                 j->hop > 0 || j->pl.kind != S_WEB ? "assume role" : "web identity", prof);
    job_got(j, &res.creds);
    bt_sts_result_clear(&res);
}

static void start_assume(struct bt_aws_job *j, const struct hop *h)
{
    struct bt_buf body = {0};
    bt_form_add(&body, "Action", "AssumeRole");
    bt_form_add(&body, "Version", "2011-06-15");
    bt_form_add(&body, "RoleArn", h->role_arn);
    bt_form_add(&body, "RoleSessionName", h->session_name);
    if (h->external_id[0])
        bt_form_add(&body, "ExternalId", h->external_id);
    if (h->duration) {
        char d[16];
        snprintf(d, sizeof d, "%d", h->duration);
        bt_form_add(&body, "DurationSeconds", d);
    }
    if (h->mfa_serial[0]) {
        char code[16] = "";
        char what[400];
        hop_what(h, what, sizeof what);
        if (!mfa_prompt || mfa_prompt(h->mfa_serial, code, sizeof code, mfa_prompt_arg) != 0 || !code[0]) {
            bt_buf_free(&body);
            job_fail(j, "%s needs a new MFA code (mfa_serial %s), which bedtop asks for only at start-up; "
                     "restart it from a terminal", what, h->mfa_serial);
            return;
        }
        bt_form_add(&body, "SerialNumber", h->mfa_serial);
        bt_form_add(&body, "TokenCode", code);
        OPENSSL_cleanse(code, sizeof code);
    }
    bt_creds_copy(&j->signer.creds, &j->cur);
    j->signer.valid = true;
    char label[320];
    snprintf(label, sizeof label, "sts %s AssumeRole (profile %s)", j->pl.sts_region, h->profile);
    struct bt_http_req req = {
        .method = "POST", .url = j->pl.sts_url, .service = "sts", .region = j->pl.sts_region,
        .creds = &j->signer, .content_type = "application/x-www-form-urlencoded; charset=utf-8",
        .body = body.buf ? body.buf : "", .body_len = body.len, .label = label, .timeout = 10,
    };
    job_submit(j, R_STS_ASSUME, &req);
    wipe_buf(&body);
}

static void start_web(struct bt_aws_job *j)
{
    /* re-read on every refresh: Kubernetes rotates the projected token */
    size_t len = 0;
    char *tok = bt_read_file(j->pl.token_file, 64 * 1024, &len);
    if (!tok) {
        job_fail(j, "web identity: cannot read token file %s: %s", j->pl.token_file, strerror(errno));
        return;
    }
    bt_trim(tok);
    if (!tok[0]) {
        free(tok);
        job_fail(j, "web identity: token file %s is empty", j->pl.token_file);
        return;
    }
    struct bt_buf body = {0};
    bt_form_add(&body, "Action", "AssumeRoleWithWebIdentity");
    bt_form_add(&body, "Version", "2011-06-15");
    bt_form_add(&body, "RoleArn", j->pl.web_role_arn);
    bt_form_add(&body, "RoleSessionName", j->pl.web_session);
    bt_form_add(&body, "WebIdentityToken", tok);
    OPENSSL_cleanse(tok, strlen(tok));
    free(tok);
    char label[200];
    snprintf(label, sizeof label, "sts %s AssumeRoleWithWebIdentity", j->pl.sts_region);
    /* unsigned, as the real service expects (the token is the proof) */
    struct bt_http_req req = {
        .method = "POST", .url = j->pl.sts_url, .content_type = "application/x-www-form-urlencoded; charset=utf-8",
        .body = body.buf ? body.buf : "", .body_len = body.len, .label = label, .timeout = 10,
    };
    job_submit(j, R_STS_WEB, &req);
    wipe_buf(&body);
}

/* ---- IAM Identity Center ---- */

static const char *json_s(const cJSON *o, const char *k)
{
    const cJSON *it = cJSON_GetObjectItemCaseSensitive(o, k);
    return cJSON_IsString(it) && it->valuestring && *it->valuestring ? it->valuestring : NULL;
}

/* expiresAt as the CLIs wrote it: "2026-12-01T10:00:00Z" (botocore, CLI v2 today) or
 * "2020-06-17T10:18:08UTC" (early CLI v2); botocore reads both with dateutil. */
static bool sso_time(const char *s, int64_t *out)
{
    if (!s)
        return false;
    if (bt_parse_iso(s, out))
        return true;
    char tmp[64];
    size_t n = strlen(s);
    if (n < 4 || n >= sizeof tmp || strcmp(s + n - 3, "UTC") != 0)
        return false;
    memcpy(tmp, s, n - 3);
    tmp[n - 3] = 'Z';
    tmp[n - 2] = '\0';
    return bt_parse_iso(tmp, out);
}

static void sso_login_hint(const struct bt_aws_job *j, char *out, size_t n)
{
    if (j->pl.sso_session[0] && strcmp(j->pl.src_profile, j->pl.top) != 0)
        snprintf(out, n, "run: aws sso login --sso-session %s", j->pl.sso_session);
    else
        snprintf(out, n, "run: aws sso login --profile %s", j->pl.src_profile);
}

static void start_portal(struct bt_aws_job *j, const char *access_token)
{
    if (!valid_token(access_token)) {
        job_fail(j, "profile \"%s\": the cached IAM Identity Center token has control characters", j->pl.src_profile);
        return;
    }
    char url[1024];
    char *acct = curl_easy_escape(NULL, j->pl.sso_account, 0), *role = curl_easy_escape(NULL, j->pl.sso_role, 0);
    snprintf(url, sizeof url, "%s/federation/credentials?account_id=%s&role_name=%s", j->pl.sso_url,
             acct ? acct : "", role ? role : "");
    curl_free(acct);
    curl_free(role);
    struct bt_header hdr = {"x-amz-sso_bearer_token", access_token};
    char label[200];
    snprintf(label, sizeof label, "sso %s GetRoleCredentials", j->pl.sso_region);
    struct bt_http_req req = {
        .method = "GET", .url = url, .headers = &hdr, .nheaders = 1, .label = label, .timeout = 10,
    };
    job_submit(j, R_SSO_PORTAL, &req);
}

static void portal_answer(struct bt_aws_job *j, const struct bt_http_resp *r)
{
    char hint[200];
    sso_login_hint(j, hint, sizeof hint);
    if (r->status == 0) {
        job_fail(j, "profile \"%s\": IAM Identity Center: %s (%s)", j->pl.src_profile, r->transport_error,
                 r->url ? r->url : "");
        return;
    }
    if (r->status == 401 || (r->status == 403 && !strcmp(r->error_code, "UnauthorizedException"))) {
        job_fail(j, "profile \"%s\": the IAM Identity Center session has expired or is invalid; %s",
                 j->pl.src_profile, hint);
        return;
    }
    if (r->status != 200) {
        char msg[160];
        safe_copy(msg, sizeof msg, r->error_message, 120);
        job_fail(j, "profile \"%s\": IAM Identity Center GetRoleCredentials for account %s role %s: %s (HTTP %ld)%s%s",
                 j->pl.src_profile, j->pl.sso_account, j->pl.sso_role,
                 r->error_code[0] ? r->error_code : "error", r->status, msg[0] ? ": " : "", msg);
        return;
    }
    cJSON *root = cJSON_ParseWithLength(r->body, r->body_len);
    const cJSON *rc = cJSON_GetObjectItemCaseSensitive(root, "roleCredentials");
    const char *akid = json_s(rc, "accessKeyId"), *secret = json_s(rc, "secretAccessKey");
    const char *token = json_s(rc, "sessionToken");
    const cJSON *exp = cJSON_GetObjectItemCaseSensitive(rc, "expiration");
    struct bt_creds c = {0};
    char what[200], err[300];
    snprintf(what, sizeof what, "profile \"%s\": IAM Identity Center", j->pl.src_profile);
    if (!akid || !secret || !cJSON_IsNumber(exp) || !(exp->valuedouble > 0 && exp->valuedouble < 1e15)) {
        wipe_json_strings(root);
        cJSON_Delete(root);
        job_fail(j, "%s: GetRoleCredentials answer lacks roleCredentials", what);
        return;
    }
    int src = creds_set(&c, akid, secret, token, what, err, sizeof err);
    c.expiration = (int64_t)(exp->valuedouble / 1000.0);
    wipe_json_strings(root);
    cJSON_Delete(root);
    if (src != 0) {
        job_fail(j, "%s", err);
        return;
    }
    snprintf(c.source, sizeof c.source, "account %s role %s (IAM Identity Center, profile %s)", j->pl.sso_account,
             j->pl.sso_role, j->pl.src_profile);
    job_got(j, &c);
    bt_creds_clear(&c);
}

/* Writes the refreshed token back as botocore's JSONFileCache does: a 0600 temp file in the
 * cache directory, then rename over the old one. */
static int sso_cache_write(const char *path, const cJSON *obj)
{
    char *text = cJSON_PrintUnformatted(obj);
    if (!text)
        return -1;
    char tmp[PATH_LEN + 16];
    snprintf(tmp, sizeof tmp, "%s.XXXXXX", path);
    int fd = mkstemp(tmp);
    int rc = -1;
    if (fd >= 0) {
        size_t len = strlen(text), off = 0;
        while (off < len) {
            ssize_t w = write(fd, text + off, len - off);
            if (w < 0 && errno == EINTR)
                continue;
            if (w <= 0)
                break;
            off += (size_t)w;
        }
        if (off == len && fsync(fd) == 0 && close(fd) == 0) {
            fd = -1;
            rc = rename(tmp, path);
        }
        if (fd >= 0)
            close(fd);
        if (rc != 0)
            unlink(tmp);
    }
    OPENSSL_cleanse(text, strlen(text));
    cJSON_free(text);
    return rc;
}

static void oidc_answer(struct bt_aws_job *j, const struct bt_http_resp *r)
{
    char hint[200];
    sso_login_hint(j, hint, sizeof hint);
    cJSON *root = r->status == 200 ? cJSON_ParseWithLength(r->body, r->body_len) : NULL;
    const char *at = json_s(root, "accessToken");
    const cJSON *ein = cJSON_GetObjectItemCaseSensitive(root, "expiresIn");
    if (!at || !cJSON_IsNumber(ein) || !(ein->valuedouble > 0 && ein->valuedouble < 1e9)) {
        if (root) {
            wipe_json_strings(root);
            cJSON_Delete(root);
        }
        /* botocore: a failed refresh leaves the old token; it is expired or about to be */
        const char *old = json_s(j->cache, "accessToken");
        int64_t exp = 0;
        const char *e = json_s(j->cache, "expiresAt");
        if (old && e && sso_time(e, &exp) && exp > (int64_t)time(NULL)) {
            start_portal(j, old);
            return;
        }
        job_fail(j, "profile \"%s\": the IAM Identity Center token has expired and its refresh failed (%s); %s",
                 j->pl.src_profile, r->status ? (r->error_code[0] ? r->error_code : "bad answer") : r->transport_error,
                 hint);
        return;
    }
    /* the new cache entry: botocore's SSOTokenProvider._attempt_create_token fields */
    char expires[32];
    int64_t exp = (int64_t)time(NULL) + (int64_t)ein->valuedouble;
    bt_fmt_iso(exp, expires, sizeof expires);
    cJSON *nt = cJSON_CreateObject();
    cJSON_AddStringToObject(nt, "startUrl", j->pl.sso_start_url);
    cJSON_AddStringToObject(nt, "region", j->pl.sso_region);
    cJSON_AddStringToObject(nt, "accessToken", at);
    cJSON_AddStringToObject(nt, "expiresAt", expires);
    static const char *const keep_keys[] = {"clientId", "clientSecret", "registrationExpiresAt"};
    for (size_t i = 0; i < BT_ARRAY_LEN(keep_keys); i++)
        if (json_s(j->cache, keep_keys[i]))
            cJSON_AddStringToObject(nt, keep_keys[i], json_s(j->cache, keep_keys[i]));
    const char *rt = json_s(root, "refreshToken");
    if (rt)
        cJSON_AddStringToObject(nt, "refreshToken", rt);
    else if (json_s(j->cache, "refreshToken"))
        cJSON_AddStringToObject(nt, "refreshToken", json_s(j->cache, "refreshToken"));
    wipe_json_strings(root);
    cJSON_Delete(root);
    if (sso_cache_write(j->cache_path, nt) != 0 && bt_http_verbose(j->h))
        fprintf(stderr, "bedtop: warning: cannot write the refreshed IAM Identity Center token to %s: %s\n",
                j->cache_path, strerror(errno));
    wipe_json_strings(j->cache);
    cJSON_Delete(j->cache);
    j->cache = nt;
    start_portal(j, json_s(nt, "accessToken"));
}

static void start_sso(struct bt_aws_job *j)
{
    char name[64];
    bt_sso_cache_name(j->pl.sso_session[0] ? j->pl.sso_session : j->pl.sso_start_url, name, sizeof name);
    snprintf(j->cache_path, sizeof j->cache_path, "%s/.aws/sso/cache/%s", home_dir(), name);
    char hint[200];
    sso_login_hint(j, hint, sizeof hint);
    size_t len = 0;
    char *text = bt_read_file(j->cache_path, 256 * 1024, &len);
    if (!text) {
        job_fail(j, "profile \"%s\": no IAM Identity Center token cached (%s: %s); %s", j->pl.src_profile,
                 j->cache_path, strerror(errno), hint);
        return;
    }
    j->cache = cJSON_ParseWithLength(text, len);
    OPENSSL_cleanse(text, len);
    free(text);
    const char *at = json_s(j->cache, "accessToken"), *e = json_s(j->cache, "expiresAt");
    int64_t exp = 0;
    if (!at || !e || !sso_time(e, &exp)) {
        job_fail(j, "profile \"%s\": the cached IAM Identity Center token %s is not valid; %s", j->pl.src_profile,
                 j->cache_path, hint);
        return;
    }
    int64_t now = (int64_t)time(NULL);
    if (!j->pl.sso_session[0]) {
        /* legacy form: no refresh (botocore raises UnauthorizedSSOTokenError) */
        if (exp <= now) {
            job_fail(j, "profile \"%s\": the IAM Identity Center token has expired; %s", j->pl.src_profile, hint);
            return;
        }
        start_portal(j, at);
        return;
    }
    if (exp - now >= 15 * 60) {
        start_portal(j, at);
        return;
    }
    /* within botocore's 15-minute refresh window: CreateToken with the refresh token */
    const char *rt = json_s(j->cache, "refreshToken"), *cid = json_s(j->cache, "clientId");
    const char *cs = json_s(j->cache, "clientSecret"), *rexp = json_s(j->cache, "registrationExpiresAt");
    int64_t reg = 0;
    if (!rt || !cid || !cs || !rexp || !sso_time(rexp, &reg) || reg <= now) {
        if (exp > now) {
            start_portal(j, at);
            return;
        }
        job_fail(j, "profile \"%s\": the IAM Identity Center token has expired and cannot be refreshed; %s",
                 j->pl.src_profile, hint);
        return;
    }
    cJSON *body = cJSON_CreateObject();
    cJSON_AddStringToObject(body, "clientId", cid);
    cJSON_AddStringToObject(body, "clientSecret", cs);
    cJSON_AddStringToObject(body, "grantType", "refresh_token");
    cJSON_AddStringToObject(body, "refreshToken", rt);
    char *text2 = cJSON_PrintUnformatted(body);
    wipe_json_strings(body);
    cJSON_Delete(body);
    if (!text2) {
        job_fail(j, "profile \"%s\": out of memory", j->pl.src_profile);
        return;
    }
    char url[600], label[200];
    snprintf(url, sizeof url, "%s/token", j->pl.oidc_url);
    snprintf(label, sizeof label, "sso-oidc %s CreateToken", j->pl.sso_region);
    struct bt_http_req req = {
        .method = "POST", .url = url, .content_type = "application/json", .body = text2,
        .body_len = strlen(text2), .label = label, .timeout = 10,
    };
    job_submit(j, R_SSO_OIDC, &req);
    OPENSSL_cleanse(text2, strlen(text2));
    cJSON_free(text2);
}

/* ---- container credentials and IMDSv2 ---- */

static void start_container(struct bt_aws_job *j)
{
    const char *full = env_nonempty("AWS_CONTAINER_CREDENTIALS_FULL_URI");
    const char *rel = env_nonempty("AWS_CONTAINER_CREDENTIALS_RELATIVE_URI");
    char url[2048];
    if (rel)
        snprintf(url, sizeof url, "http://169.254.170.2%s%s", rel[0] == '/' ? "" : "/", rel);
    else
        snprintf(url, sizeof url, "%s", full ? full : "");
    char safe_url[256];
    safe_copy(safe_url, sizeof safe_url, url, 200);
    if (!rel && !container_host_allowed(url)) {
        job_fail(j, "container credentials: AWS_CONTAINER_CREDENTIALS_FULL_URI %s is not https and not a loopback "
                 "or container-agent address; refusing to send credentials there", safe_url);
        return;
    }
    char *token = NULL;
    const char *tfile = env_nonempty("AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE");
    if (tfile) {
        /* re-read every time: EKS Pod Identity rotates it */
        token = bt_read_file(tfile, MAX_VALUE, NULL);
        if (!token) {
            job_fail(j, "container credentials: cannot read AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE %s: %s", tfile,
                     strerror(errno));
            return;
        }
        token[strcspn(token, "\r\n")] = '\0';
    } else if (env_nonempty("AWS_CONTAINER_AUTHORIZATION_TOKEN")) {
        token = bt_xstrdup(getenv("AWS_CONTAINER_AUTHORIZATION_TOKEN"));
    }
    if (token && !valid_token(token)) {
        OPENSSL_cleanse(token, strlen(token));
        free(token);
        job_fail(j, "container credentials: authorization token has control characters");
        return;
    }
    struct bt_header hdr = {"Authorization", token ? token : ""};
    struct bt_http_req req = {
        .method = "GET", .url = url, .headers = token ? &hdr : NULL, .nheaders = token ? 1 : 0,
        .label = "container credentials", .timeout = 2, .max_attempts = 2,
    };
    job_submit(j, R_CONTAINER, &req);
    if (token) {
        OPENSSL_cleanse(token, strlen(token));
        free(token);
    }
}

/* The container endpoint's and IMDS's JSON answer {AccessKeyId, SecretAccessKey, Token, Expiration}. */
static void json_creds_answer(struct bt_aws_job *j, const struct bt_http_resp *r, const char *what,
                              const char *source)
{
    if (r->status != 200) {
        if (r->status == 0)
            job_fail(j, "%s: %s", what, r->transport_error);
        else
            job_fail(j, "%s: HTTP %ld", what, r->status);
        return;
    }
    struct bt_creds c = {0};
    char err[700];
    bt_strlcpy(c.source, source, sizeof c.source);
    if (creds_from_json(r->body, r->body_len, false, &c, what, err, sizeof err) != 0) {
        bt_creds_clear(&c);
        job_fail(j, "%s", err);
        return;
    }
    job_got(j, &c);
    bt_creds_clear(&c);
}

static void container_answer(struct bt_aws_job *j, const struct bt_http_resp *r)
{
    char what[320], safe_url[256];
    safe_copy(safe_url, sizeof safe_url, r->url ? r->url : "", 200);
    snprintf(what, sizeof what, "container credentials (%s)", safe_url);
    json_creds_answer(j, r, what, what);
}

static void imds_request(struct bt_aws_job *j, const char *method, const char *path)
{
    char url[1024];
    snprintf(url, sizeof url, "%s%s", j->imds_base, path);
    struct bt_header hdr[1];
    size_t nh = 0;
    if (j->imds_token)
        hdr[nh++] = (struct bt_header){"X-aws-ec2-metadata-token", j->imds_token};
    else
        hdr[nh++] = (struct bt_header){"X-aws-ec2-metadata-token-ttl-seconds", "21600"};
    struct bt_http_req req = {
        .method = method, .url = url, .headers = hdr, .nheaders = nh, .label = "IMDSv2",
        .timeout = 1, .max_attempts = 1,
    };
    job_submit(j, R_IMDS, &req);
}

static void start_imds(struct bt_aws_job *j)
{
    const char *ep = env_nonempty("AWS_EC2_METADATA_SERVICE_ENDPOINT");
    bt_strlcpy(j->imds_base, ep ? ep : "http://169.254.169.254", sizeof j->imds_base);
    size_t bl = strlen(j->imds_base);
    while (bl && j->imds_base[bl - 1] == '/')
        j->imds_base[--bl] = '\0';
    j->imds_stage = 0;
    imds_request(j, "PUT", "/latest/api/token");
}

static void imds_answer(struct bt_aws_job *j, const struct bt_http_resp *r)
{
    char safe_base[200];
    safe_copy(safe_base, sizeof safe_base, j->imds_base, 160);
    int stage = j->imds_stage;
    if (stage == 0) {
        if (r->status == 0) {
            if (j->pl.tried[0] && strncmp(j->pl.tried, "credential_source", 17) != 0)
                job_fail(j, "no AWS credentials: tried %s, IMDSv2 (%s: %s)", j->pl.tried, safe_base, r->transport_error);
            else
                job_fail(j, "IMDSv2 (%s): %s", safe_base, r->transport_error);
            return;
        }
        char tok[1024];
        bt_strlcpy(tok, r->body, sizeof tok);
        if (r->status != 200 || !r->body_len || r->body_len >= sizeof tok || !valid_token(bt_trim(tok))) {
            job_fail(j, "IMDSv2 (%s): token request got HTTP %ld", safe_base, r->status);
            return;
        }
        j->imds_token = bt_xstrdup(bt_trim(tok));
        OPENSSL_cleanse(tok, sizeof tok);
        j->imds_stage = 1;
        imds_request(j, "GET", "/latest/meta-data/iam/security-credentials/");
        return;
    }
    if (stage == 1) {
        if (r->status != 200 || !r->body_len) {
            if (r->status == 0)
                job_fail(j, "IMDSv2 (%s): role list: %s", safe_base, r->transport_error);
            else
                job_fail(j, "IMDSv2 (%s): no instance role (HTTP %ld)", safe_base, r->status);
            return;
        }
        char role[256];
        bt_strlcpy(role, r->body, sizeof role);
        role[strcspn(role, "\r\n")] = '\0';
        safe_copy(j->imds_role, sizeof j->imds_role, bt_trim(role), 128);
        if (!j->imds_role[0] || strpbrk(j->imds_role, "/?#%")) {
            job_fail(j, "IMDSv2 (%s): unusable role name", safe_base);
            return;
        }
        j->imds_stage = 2;
        char path[300];
        snprintf(path, sizeof path, "/latest/meta-data/iam/security-credentials/%s", j->imds_role);
        imds_request(j, "GET", path);
        return;
    }
    char what[512];
    snprintf(what, sizeof what, "IMDSv2 (%s) role %s", safe_base, j->imds_role);
    char source[200];
    snprintf(source, sizeof source, "IMDSv2 role %s", j->imds_role);
    json_creds_answer(j, r, what, source);
}

static void job_http_cb(void *arg, const struct bt_http_resp *r)
{
    struct bt_aws_job *j = arg;
    switch (j->req) {
    case R_STS_ASSUME: {
        char what[400];
        hop_what(&j->pl.hops[j->hop - 1], what, sizeof what);
        sts_answer(j, r, what, j->pl.hops[j->hop - 1].profile);
        break;
    }
    case R_STS_WEB: {
        char what[400];
        snprintf(what, sizeof what, "%s%s%s: AssumeRoleWithWebIdentity %s",
                 j->pl.src_profile[0] ? "profile \"" : "web identity (AWS_WEB_IDENTITY_TOKEN_FILE)",
                 j->pl.src_profile, j->pl.src_profile[0] ? "\"" : "", j->pl.web_role_arn);
        sts_answer(j, r, what, j->pl.src_profile[0] ? j->pl.src_profile : "environment");
        break;
    }
    case R_SSO_PORTAL: portal_answer(j, r); break;
    case R_SSO_OIDC: oidc_answer(j, r); break;
    case R_CONTAINER: container_answer(j, r); break;
    case R_IMDS: imds_answer(j, r); break;
    }
}

/* ---- credential_process, as a child the loop watches ---- */

static void process_close_pipes(struct bt_aws_job *j)
{
    for (int k = 0; k < 2; k++) {
        if (j->fd[k] >= 0) {
            bt_http_unwatch(j->h, j->fd[k], j);
            close(j->fd[k]);
            j->fd[k] = -1;
        }
    }
    bt_http_unwatch(j->h, -1, j);
}

/* The child is done (j->pid 0, j->status set) or must die (killed here): say how it went. */
static void process_finish(struct bt_aws_job *j, bool timed_out)
{
    process_close_pipes(j);
    if (j->pid > 0) {
        if (timed_out || j->too_big)
            kill(-j->pid, SIGKILL);
        while (waitpid(j->pid, &j->status, 0) < 0 && errno == EINTR)
            ;
        j->pid = 0;
    }
    int status = j->status;
    char errline[256] = "";
    if (j->errb.len) {
        char first[512];
        bt_strlcpy(first, bt_buf_str(&j->errb), sizeof first);
        first[strcspn(first, "\r\n")] = '\0';
        safe_copy(errline, sizeof errline, first, 200);
    }
    char what[PATH_LEN + 300];
    snprintf(what, sizeof what, "credential_process \"%s\" (%s)", j->name, j->pl.where);
    if (j->too_big) {
        job_fail(j, "%s printed more than %d KiB", what, MAX_PROCESS_OUT / 1024);
        return;
    }
    if (timed_out) {
        job_fail(j, "%s timed out after %d ms and was killed", what, process_timeout_ms);
        return;
    }
    if (WIFSIGNALED(status)) {
        job_fail(j, "%s killed by signal %d", what, WTERMSIG(status));
        return;
    }
    if (WIFEXITED(status) && WEXITSTATUS(status) != 0) {
        job_fail(j, "%s exited with status %d%s%s", what, WEXITSTATUS(status), errline[0] ? ": " : "", errline);
        return;
    }
    struct bt_creds c = {0};
    char err[PATH_LEN + 400];
    snprintf(c.source, sizeof c.source, "credential_process (%s)", j->pl.where);
    if (creds_from_json(j->out.buf ? j->out.buf : "", j->out.len, true, &c, what, err, sizeof err) != 0) {
        bt_creds_clear(&c);
        job_fail(j, "%s", err);
        return;
    }
    job_got(j, &c);
    bt_creds_clear(&c);
}

/* Pipe readable, the deadline, or (after both pipes closed) the wait for the exit status. */
static void process_event(void *arg, int fd, bool timed_out)
{
    struct bt_aws_job *j = arg;
    if (mono_ms() >= j->deadline) {
        process_finish(j, true);
        return;
    }
    if (fd < 0) {
        pid_t w = waitpid(j->pid, &j->status, WNOHANG);
        if (w == j->pid || (w < 0 && errno != EINTR)) {
            j->pid = 0;
            process_finish(j, false);
        } else {
            bt_http_unwatch(j->h, -1, j);
            bt_http_watch(j->h, -1, mono_ms() + 10, process_event, j);
        }
        return;
    }
    (void)timed_out;
    int i = fd == j->fd[0] ? 0 : fd == j->fd[1] ? 1 : -1;
    if (i < 0)
        return;
    char chunk[4096];
    ssize_t r = read(fd, chunk, sizeof chunk);
    if (r < 0 && (errno == EINTR || errno == EAGAIN))
        return;
    if (r <= 0) {
        bt_http_unwatch(j->h, fd, j);
        close(fd);
        j->fd[i] = -1;
    } else if (i == 0 && j->out.len + (size_t)r > MAX_PROCESS_OUT) {
        j->too_big = true;
    } else if (i == 0) {
        bt_buf_add(&j->out, chunk, (size_t)r);
    } else if (j->errb.len < 4096) {
        bt_buf_add(&j->errb, chunk, (size_t)r);
    }
    OPENSSL_cleanse(chunk, sizeof chunk);
    if (j->too_big) {
        process_finish(j, false);
        return;
    }
    if (j->fd[0] < 0 && j->fd[1] < 0) {
        /* both pipes closed: the exit status follows in a moment */
        bt_http_unwatch(j->h, -1, j);
        bt_http_watch(j->h, -1, mono_ms(), process_event, j);
    }
}

/* Runs the command without a shell in its own process group (so a timeout kills its children
 * too), stdin from /dev/null; the loop reads its pipes and enforces the deadline. */
static void start_process(struct bt_aws_job *j)
{
    char why[256];
    char **argv = split_command(j->pl.cmd, why, sizeof why);
    if (!argv) {
        job_fail(j, "credential_process (%s): cannot parse the command: %s", j->pl.where, why);
        return;
    }
    safe_copy(j->name, sizeof j->name, argv[0], 80);
    int op[2], ep[2];
    if (pipe(op) != 0) {
        free_argv(argv);
        job_fail(j, "credential_process (%s): pipe: %s", j->pl.where, strerror(errno));
        return;
    }
    if (pipe(ep) != 0) {
        close(op[0]);
        close(op[1]);
        free_argv(argv);
        job_fail(j, "credential_process (%s): pipe: %s", j->pl.where, strerror(errno));
        return;
    }
    for (int i = 0; i < 2; i++) {
        set_cloexec(op[i]);
        set_cloexec(ep[i]);
    }
    fcntl(op[0], F_SETFL, fcntl(op[0], F_GETFL) | O_NONBLOCK);
    fcntl(ep[0], F_SETFL, fcntl(ep[0], F_GETFL) | O_NONBLOCK);
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
    sigaddset(&deflt, SIGHUP);
    sigaddset(&deflt, SIGCHLD);
    posix_spawnattr_setsigmask(&attr, &none);
    posix_spawnattr_setsigdefault(&attr, &deflt);
    posix_spawnattr_setpgroup(&attr, 0);
    posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
    pid_t pid;
    int rc = posix_spawnp(&pid, argv[0], &fa, &attr, argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    posix_spawnattr_destroy(&attr);
    free_argv(argv);
    close(op[1]);
    close(ep[1]);
    if (rc != 0) {
        close(op[0]);
        close(ep[0]);
        job_fail(j, "credential_process \"%s\" (%s) cannot run: %s", j->name, j->pl.where, strerror(rc));
        return;
    }
    j->pid = pid;
    j->fd[0] = op[0];
    j->fd[1] = ep[0];
    j->deadline = mono_ms() + process_timeout_ms;
    bt_http_watch(j->h, op[0], j->deadline, process_event, j);
    bt_http_watch(j->h, ep[0], j->deadline, process_event, j);
}

/* ---- running the plan ---- */

static void job_next(struct bt_aws_job *j)
{
    if (j->hop < j->pl.nhops) {
        start_assume(j, &j->pl.hops[j->hop++]);
        return;
    }
    struct bt_creds done = {0};
    bt_creds_copy(&done, &j->cur);
    if (plan_needs_mfa(&j->pl))
        mfa_store(j->pl.top, &done);
    j->cb(j->arg, &done, NULL);
    bt_creds_clear(&done);
    job_free(j);
}

static void job_kick(void *arg, int fd, bool timed_out)
{
    struct bt_aws_job *j = arg;
    (void)fd;
    (void)timed_out;
    bt_http_unwatch(j->h, -1, j);
    switch (j->pl.kind) {
    case S_STATIC:
        bt_creds_copy(&j->cur, &j->pl.creds);
        job_next(j);
        break;
    case S_PROCESS: start_process(j); break;
    case S_CONTAINER: start_container(j); break;
    case S_IMDS: start_imds(j); break;
    case S_SSO: start_sso(j); break;
    case S_WEB: start_web(j); break;
    }
}

int bt_aws_creds_start(struct bt_http *h, const struct bt_aws_profile_opts *o, struct bt_creds *out,
                       bt_aws_job_cb cb, void *arg, struct bt_aws_job **jobp, char *err, size_t errlen)
{
    if (jobp)
        *jobp = NULL;
    if (!out)
        return -1;
    struct bt_aws_job *j = bt_xcalloc(1, sizeof *j);
    j->fd[0] = j->fd[1] = -1;
    if (plan_build(&j->pl, o, err, errlen) != 0) {
        free(j);
        return -1;
    }
    const struct bt_creds *cached = plan_needs_mfa(&j->pl) ? mfa_cached(j->pl.top) : NULL;
    if ((j->pl.kind == S_STATIC && j->pl.nhops == 0) || cached) {
        bt_creds_copy(out, cached ? cached : &j->pl.creds);
        job_free(j);
        return 0;
    }
    if (!h || !cb) {
        seterr(err, errlen, "profile \"%s\": credentials need network requests", j->pl.top);
        job_free(j);
        return -1;
    }
    j->h = h;
    j->cb = cb;
    j->arg = arg;
    if (jobp)
        *jobp = j;
    /* the first step starts from the loop (a zero-delay timer), so the caller returns first
     * and a failure arrives through cb like any other */
    bt_http_watch(h, -1, mono_ms(), job_kick, j);
    return 1;
}

/* ---- the blocking form, for start-up checks and tests --------------------------------- */

struct sync_wait {
    bool done;
    int rc;
    struct bt_creds *out;
    char *err;
    size_t errlen;
};

static void sync_cb(void *arg, const struct bt_creds *c, const char *err)
{
    struct sync_wait *w = arg;
    w->done = true;
    w->rc = c ? 0 : -1;
    if (c)
        bt_creds_copy(w->out, c);
    else
        seterr(w->err, w->errlen, "%s", err ? err : "failed");
}

int bt_aws_resolve_creds(const struct bt_aws_profile_opts *o, struct bt_creds *out, char *err, size_t errlen)
{
    if (!out)
        return -1;
    struct bt_creds got = {0};
    struct sync_wait w = {.out = &got, .err = err, .errlen = errlen};
    struct bt_http *h = bt_http_new(0);
    struct bt_aws_job *j = NULL;
    int rc = bt_aws_creds_start(h, o, &got, h ? sync_cb : NULL, &w, &j, err, errlen);
    if (rc == 1) {
        while (!w.done && bt_http_poll(h, 1000, -1, NULL) >= 0)
            ;
        if (!w.done) {
            bt_aws_job_cancel(j);
            seterr(err, errlen, "credentials: the event loop failed");
        }
        rc = w.done ? w.rc : -1;
    }
    if (rc == 0)
        bt_creds_copy(out, &got);
    bt_creds_clear(&got);
    bt_http_free(h);
    return rc;
}

bool bt_aws_profile_needs_mfa(const struct bt_aws_profile_opts *o)
{
    struct plan pl;
    char err[256];
    if (plan_build(&pl, o, err, sizeof err) != 0)
        return false;
    bool mfa = plan_needs_mfa(&pl) && !mfa_cached(pl.top);
    plan_free(&pl);
    return mfa;
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
    {"portal.sso", "AWS_ENDPOINT_URL_SSO"},
    {"oidc", "AWS_ENDPOINT_URL_SSO_OIDC"},
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
