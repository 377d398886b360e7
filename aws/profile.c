/* The AWS shared files (~/.aws/credentials and ~/.aws/config) as the CLI reads them: one
 * profile's keys from both, the [sso-session NAME] it names, and where the files are. */
#include <errno.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <ini.h>
#include <openssl/crypto.h>

#include "aws/creds_int.h"
#include "io/file.h"

/* ---- shared files ---------------------------------------------------------------- */

const char *bt_aws_home_dir(void)
{
    const char *h = bt_aws_env("HOME");
    if (h)
        return h;
    struct passwd *pw = getpwuid(getuid());
    return pw && pw->pw_dir ? pw->pw_dir : "/";
}

static void shared_path(const char *envname, const char *file, char *out, size_t n)
{
    const char *v = bt_aws_env(envname);
    if (v && v[0] == '~' && (v[1] == '/' || v[1] == '\0'))
        snprintf(out, n, "%s%s", bt_aws_home_dir(), v + 1);
    else if (v)
        snprintf(out, n, "%s", v);
    else
        snprintf(out, n, "%s/.aws/%s", bt_aws_home_dir(), file);
}

void bt_aws_credentials_file(char *out, size_t n)
{
    shared_path("AWS_SHARED_CREDENTIALS_FILE", "credentials", out, n);
}

void bt_aws_config_file(char *out, size_t n)
{
    shared_path("AWS_CONFIG_FILE", "config", out, n);
}

/* The names of the K_ keys, as the shared files spell them. */
static const char *const key_names[NKEYS] = {
    [K_ROLE_ARN] = "role_arn",
    [K_SOURCE_PROFILE] = "source_profile",
    [K_CRED_SOURCE] = "credential_source",
    [K_SESSION_NAME] = "role_session_name",
    [K_EXTERNAL_ID] = "external_id",
    [K_DURATION] = "duration_seconds",
    [K_MFA_SERIAL] = "mfa_serial",
    [K_WEB_TOKEN_FILE] = "web_identity_token_file",
    [K_SSO_SESSION] = "sso_session",
    [K_SSO_START_URL] = "sso_start_url",
    [K_SSO_REGION] = "sso_region",
    [K_SSO_ACCOUNT] = "sso_account_id",
    [K_SSO_ROLE] = "sso_role_name",
    [K_SSO_SCOPES] = "sso_registration_scopes",
    [K_STS_REGIONAL] = "sts_regional_endpoints",
};

const char *bt_aws_pget(const struct profile *p, int k)
{
    const char *v = p->kv[SRC_CREDS][k] ? p->kv[SRC_CREDS][k] : p->kv[SRC_CONFIG][k];
    return v && *v ? v : NULL;
}

void bt_aws_profile_free(struct profile *p)
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

/* The longest line of a shared file: its longest value and the key before it. A longer
 * one is an error naming file and line (inih would read its tail as a line of its own,
 * and ran a credential_process hidden past byte 65,535 of a comment). */
#define MAX_LINE (MAX_VALUE * 4)

static bool key_used(const char *name)
{
    static const char *const direct[] = {"aws_access_key_id", "aws_secret_access_key",
                                         "aws_session_token", "credential_process", "region",
                                         "endpoint_url"};
    for (size_t i = 0; i < BT_ARRAY_LEN(direct); i++)
        if (!strcmp(name, direct[i]))
            return true;
    for (int k = 0; k < NKEYS; k++)
        if (!strcmp(name, key_names[k]))
            return true;
    return false;
}

/* Whether section (as written between the brackets, trimmed) is one this parse reads. */
static bool section_wanted(const struct ini_ctx *ctx, const char *section)
{
    return ctx->sso_session ? sso_section_matches(section, ctx->sso_session)
                            : section_matches(section, ctx->p->name, ctx->src);
}

/* Rewrites text in place, line for line, into what inih reads as botocore's
 * configparser does: a line indented deeper than the key above continues that key's
 * value (as a nested "s3 =" block does) and becomes a comment; any other line is read
 * whatever its indentation (inih skips it once multiline is off), so uniformly
 * indented keys are keys. A continued key that bedtop
 * reads, in a section it reads, is refused (a multi-line credential_process or
 * region means something bedtop would guess at). 0, or the line number with why. */
static int botocore_lines(char *text, const struct ini_ctx *ctx, char *why, size_t whylen)
{
    char section[256] = "", key[128] = "";
    size_t key_indent = 0;
    int line = 1;
    for (char *p = text; *p; line++) {
        char *nl = strchr(p, '\n');
        size_t len = nl ? (size_t)(nl - p) : strlen(p);
        size_t ind = strspn(p, " \t");
        char *body = p + ind;
        bool blank = ind == len || body[0] == '\r';
        bool comment = !blank && (body[0] == '#' || body[0] == ';');
        if (!blank && !comment) {
            if (key[0] && ind > key_indent) {
                if (section_wanted(ctx, section) && key_used(key)) {
                    snprintf(why, whylen, "an indented line continues the value of %s (as botocore "
                             "reads it); bedtop takes no multi-line %s: write it on one line",
                             key, key);
                    return line;
                }
                body[0] = '#'; /* the rest of a value bedtop does not read */
            } else if (body[0] == '[') {
                size_t n = strcspn(body + 1, "]\n");
                snprintf(section, sizeof section, "%.*s", (int)n, body + 1);
                char *t = bt_trim(section);
                if (t != section) /* fortified memmove onto itself upsets valgrind */
                    memmove(section, t, strlen(t) + 1);
                key[0] = '\0';
            } else {
                size_t n = strcspn(body, "=:\n");
                snprintf(key, sizeof key, "%.*s", (int)(n < sizeof key ? n : sizeof key - 1), body);
                char *t = bt_trim(key);
                if (t != key)
                    memmove(key, t, strlen(t) + 1);
                key_indent = ind;
            }
        }
        if (!nl)
            break;
        p = nl + 1;
    }
    return 0;
}

/* The shared files hold ~2 KB session tokens and ';' inside commands, so for this parse inih
 * gets a growing heap line buffer and no inline comments (botocore's configparser has none).
 * >0: the line that fails, with why (empty: not key = value); -1: not readable (errno). */
static int parse_ini_file(const char *path, struct ini_ctx *ctx, char *why, size_t whylen)
{
    why[0] = '\0';
    char *text = bt_read_file(path, 4 << 20, NULL);
    if (!text)
        return -1;
    int rc = bt_first_long_line(text, MAX_LINE);
    if (rc) {
        snprintf(why, whylen, "line longer than %d bytes; not split (botocore reads it whole)",
                 MAX_LINE);
        free(text);
        return rc;
    }
    rc = botocore_lines(text, ctx, why, whylen);
    if (rc) {
        free(text);
        return rc;
    }
    bool use_stack = ini_use_stack, allow_realloc = ini_allow_realloc;
    bool inline_comments = ini_allow_inline_comments, multiline = ini_allow_multiline;
    int max_line = ini_max_line;
    ini_use_stack = false;
    ini_allow_realloc = true;
    ini_max_line = MAX_LINE + 2; /* the line, its newline, the NUL */
    ini_allow_inline_comments = false;
    ini_allow_multiline = false; /* botocore_lines has decided what continues */
    rc = ini_parse_string(text, profile_ini_handler, ctx);
    ini_use_stack = use_stack;
    ini_allow_realloc = allow_realloc;
    ini_max_line = max_line;
    ini_allow_inline_comments = inline_comments;
    ini_allow_multiline = multiline;
    OPENSSL_cleanse(text, strlen(text)); /* it held the secret keys */
    free(text);
    return rc;
}

int bt_aws_profile_load(struct profile *p, const char *name, char *err, size_t errlen)
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
            bt_aws_seterr(err, errlen, "%s: %s", p->path[s], strerror(errno));
            return -1;
        }
        if (!S_ISREG(st.st_mode)) {
            bt_aws_seterr(err, errlen, "%s: not a regular file", p->path[s]);
            return -1;
        }
        p->file_exists[s] = true;
        struct ini_ctx ctx = {p, s, NULL};
        char why[200];
        int rc = parse_ini_file(p->path[s], &ctx, why, sizeof why);
        if (rc < 0) {
            bt_aws_seterr(err, errlen, "%s: cannot read: %s", p->path[s], strerror(errno ? errno : EIO));
            return -1;
        }
        if (rc > 0) {
            bt_aws_seterr(err, errlen, "%s:%d: %s (AWS shared %s file)", p->path[s], rc,
                          why[0] ? why : "not a valid INI line",
                          s == SRC_CREDS ? "credentials" : "config");
            return -1;
        }
        if (p->bad_key[0]) {
            bt_aws_seterr(err, errlen, "%s: value of %s in profile \"%s\" is longer than %d bytes",
                   p->path[p->bad_src], p->bad_key, name, MAX_VALUE);
            return -1;
        }
    }
    const char *sess = bt_aws_pget(p, K_SSO_SESSION);
    if (sess && p->file_exists[SRC_CONFIG]) {
        struct ini_ctx ctx = {p, SRC_CONFIG, sess};
        char why[200];
        if (parse_ini_file(p->path[SRC_CONFIG], &ctx, why, sizeof why) != 0) {
            bt_aws_seterr(err, errlen, "%s: cannot read the [sso-session %s] section", p->path[SRC_CONFIG], sess);
            return -1;
        }
    }
    return 0;
}

const char *bt_aws_profile_name(const struct bt_aws_profile_opts *o, bool *explicit_name)
{
    if (o && o->profile && *o->profile) {
        *explicit_name = true;
        return o->profile;
    }
    const char *env = bt_aws_env("AWS_PROFILE");
    *explicit_name = env != NULL;
    return env ? env : "default";
}
bool bt_aws_check_file_perms(const char *path, char *msg, size_t n)
{
    struct stat st;
    if (!path || stat(path, &st) != 0 || !(st.st_mode & 077))
        return false;
    bt_aws_seterr(msg, n, "%s is accessible by group/others (mode %04o): run chmod 600 %s", path,
           (unsigned)(st.st_mode & 07777), path);
    return true;
}
