/* The credential / Region / endpoint chain with real files in temp HOME dirs, real
 * credential_process helpers, and a python3 fake for container credentials and IMDSv2
 * on 127.0.0.1. Every case resets the AWS_* environment, and IMDS is disabled unless
 * the case points it at the fake, so nothing ever leaves loopback. */
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "aws/awsauth.h"
#include "core/util.h"
#include "io/file.h"
#include "tests/tap.h"

extern char **environ;

#define EX_AKID "AKIDEXAMPLE"
#define EX_SECRET "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY"
/* 2030-01-02T03:04:05Z = 21916 days * 86400 + 3*3600 + 4*60 + 5 */
#define EXP_2030 1893553445LL

static char root[256];
static char home[512];
static int case_no;

static const char *aws_vars[] = {
    "AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_SECURITY_TOKEN",
    "AWS_CREDENTIAL_EXPIRATION", "AWS_PROFILE", "AWS_DEFAULT_PROFILE", "AWS_SHARED_CREDENTIALS_FILE",
    "AWS_CONFIG_FILE", "AWS_REGION", "AWS_DEFAULT_REGION", "AWS_ENDPOINT_URL",
    "AWS_ENDPOINT_URL_CLOUDWATCH", "AWS_ENDPOINT_URL_SERVICE_QUOTAS", "AWS_IGNORE_CONFIGURED_ENDPOINT_URLS",
    "AWS_CONTAINER_CREDENTIALS_FULL_URI", "AWS_CONTAINER_CREDENTIALS_RELATIVE_URI",
    "AWS_CONTAINER_AUTHORIZATION_TOKEN", "AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE",
    "AWS_EC2_METADATA_SERVICE_ENDPOINT", "AWS_EC2_METADATA_DISABLED", "AWS_ROLE_ARN",
    "AWS_WEB_IDENTITY_TOKEN_FILE", "AWS_ROLE_SESSION_NAME", "AWS_ENDPOINT_URL_STS",
    "AWS_ENDPOINT_URL_SSO", "AWS_ENDPOINT_URL_SSO_OIDC", "AWS_STS_REGIONAL_ENDPOINTS",
};

/* A fresh HOME (with ~/.aws) and a clean AWS environment for each case. */
static void fresh_case(void)
{
    for (size_t i = 0; i < BT_ARRAY_LEN(aws_vars); i++)
        unsetenv(aws_vars[i]);
    snprintf(home, sizeof home, "%s/home%d", root, ++case_no);
    mkdir(home, 0700);
    char aws[600];
    snprintf(aws, sizeof aws, "%s/.aws", home);
    mkdir(aws, 0700);
    setenv("HOME", home, 1);
    setenv("AWS_EC2_METADATA_DISABLED", "true", 1);
}

static void write_file(const char *path, const char *text, mode_t mode)
{
    FILE *f = fopen(path, "w");
    if (!f) {
        printf("# cannot write %s: %s\n", path, strerror(errno));
        return;
    }
    fputs(text, f);
    fclose(f);
    chmod(path, mode);
}

static void write_home(const char *name, const char *text)
{
    char path[700];
    snprintf(path, sizeof path, "%s/.aws/%s", home, name);
    write_file(path, text, 0600);
}

static int resolve(const char *profile, struct bt_creds *c, char *err, size_t n)
{
    struct bt_aws_profile_opts o = {.profile = profile};
    bt_creds_clear(c);
    err[0] = '\0';
    return bt_aws_resolve_creds(&o, c, err, n);
}

static void test_env(void)
{
    struct bt_creds c = {0};
    char err[1024];
    fresh_case();
    setenv("AWS_ACCESS_KEY_ID", EX_AKID, 1);
    setenv("AWS_SECRET_ACCESS_KEY", EX_SECRET, 1);
    setenv("AWS_SESSION_TOKEN", "envtoken", 1);
    int rc = resolve(NULL, &c, err, sizeof err);
    OK(rc == 0 && strcmp(c.access_key, EX_AKID) == 0 && strcmp(c.secret_key, EX_SECRET) == 0 &&
       c.session_token && strcmp(c.session_token, "envtoken") == 0 && strcmp(c.source, "environment") == 0,
       "env: keys and token from the environment");
    OK(c.expiration == 0, "env: static keys do not expire");

    /* AWS_PROFILE does not outrank env keys (CLI order), --profile does. */
    write_home("credentials", "[prod]\naws_access_key_id = AKIDPROD\naws_secret_access_key = prodsecret\n");
    setenv("AWS_PROFILE", "prod", 1);
    rc = resolve(NULL, &c, err, sizeof err);
    OK(rc == 0 && strcmp(c.access_key, EX_AKID) == 0, "env: env keys win over AWS_PROFILE");
    rc = resolve("prod", &c, err, sizeof err);
    OK(rc == 0 && strcmp(c.access_key, "AKIDPROD") == 0 && c.session_token == NULL,
       "env: --profile wins over env keys");
    OK(strstr(c.source, "profile prod") && strstr(c.source, "/.aws/credentials"),
       "env: source names the profile and file (%s)", c.source);

    fresh_case();
    setenv("AWS_SECRET_ACCESS_KEY", "SECRETONLYVALUE", 1);
    rc = resolve(NULL, &c, err, sizeof err);
    OK(rc == -1 && strstr(err, "AWS_ACCESS_KEY_ID") && !strstr(err, "SECRETONLYVALUE"),
       "env: secret without key id is an error without the secret (%s)", err);
    bt_creds_clear(&c);
}

static void test_profiles(void)
{
    struct bt_creds c = {0};
    char err[1024];
    fresh_case();
    write_home("credentials", "[default]\naws_access_key_id = AKIDDEFAULT\naws_secret_access_key = s1\n"
                              "[prod]\naws_access_key_id = AKIDPROD\naws_secret_access_key = s2\n"
                              "aws_session_token = tok2\n");
    int rc = resolve(NULL, &c, err, sizeof err);
    OK(rc == 0 && strcmp(c.access_key, "AKIDDEFAULT") == 0, "profile: [default] when nothing chosen");
    setenv("AWS_PROFILE", "prod", 1);
    rc = resolve(NULL, &c, err, sizeof err);
    OK(rc == 0 && strcmp(c.access_key, "AKIDPROD") == 0 && c.session_token &&
       strcmp(c.session_token, "tok2") == 0, "profile: AWS_PROFILE picks [prod] with its token");
    rc = resolve("default", &c, err, sizeof err);
    OK(rc == 0 && strcmp(c.access_key, "AKIDDEFAULT") == 0, "profile: --profile outranks AWS_PROFILE");

    /* config uses [profile x]; a bare [x] there is not profile x. */
    fresh_case();
    write_home("config", "[dev]\naws_access_key_id = AKIDWRONG\naws_secret_access_key = w\n"
                         "[profile   dev]\nregion = eu-west-1\naws_access_key_id = AKIDDEV\n"
                         "aws_secret_access_key = devsecret\n");
    rc = resolve("dev", &c, err, sizeof err);
    OK(rc == 0 && strcmp(c.access_key, "AKIDDEV") == 0 && strstr(c.source, "/.aws/config"),
       "profile: [profile dev] section in config (%s)", rc ? err : c.source);

    /* Same profile in both files: credentials wins. */
    write_home("credentials", "[dev]\naws_access_key_id = AKIDCREDS\naws_secret_access_key = c\n");
    rc = resolve("dev", &c, err, sizeof err);
    OK(rc == 0 && strcmp(c.access_key, "AKIDCREDS") == 0, "profile: credentials file outranks config");

    /* Env overrides of both paths, with ~ expanded. */
    fresh_case();
    char p1[700], p2[700];
    snprintf(p1, sizeof p1, "%s/my-creds", home);
    snprintf(p2, sizeof p2, "%s/my-config", home);
    write_file(p1, "[alt]\naws_access_key_id = AKIDALT\naws_secret_access_key = a\n", 0600);
    write_file(p2, "[profile cfg]\naws_access_key_id = AKIDCFG\naws_secret_access_key = b\n", 0600);
    setenv("AWS_SHARED_CREDENTIALS_FILE", "~/my-creds", 1);
    setenv("AWS_CONFIG_FILE", p2, 1);
    rc = resolve("alt", &c, err, sizeof err);
    OK(rc == 0 && strcmp(c.access_key, "AKIDALT") == 0 && strstr(c.source, "my-creds"),
       "profile: AWS_SHARED_CREDENTIALS_FILE with ~ (%s)", rc ? err : c.source);
    rc = resolve("cfg", &c, err, sizeof err);
    OK(rc == 0 && strcmp(c.access_key, "AKIDCFG") == 0, "profile: AWS_CONFIG_FILE");

    rc = resolve("nope", &c, err, sizeof err);
    OK(rc == -1 && strstr(err, "profile \"nope\"") && strstr(err, "not found") && strstr(err, "my-creds"),
       "profile: unknown --profile is an error naming the files (%s)", err);

    fresh_case();
    write_home("credentials", "[half]\naws_access_key_id = AKIDHALF\n");
    rc = resolve("half", &c, err, sizeof err);
    OK(rc == -1 && strstr(err, "aws_secret_access_key"), "profile: key id without secret is an error (%s)", err);

    /* Assume role: the chain is followed (not refused); a missing source is named. */
    fresh_case();
    write_home("config", "[profile assumer]\nrole_arn = arn:aws:iam::123456789012:role/x\nsource_profile = nosuch\n");
    rc = resolve("assumer", &c, err, sizeof err);
    OK(rc == -1 && strstr(err, "source_profile \"nosuch\" not found"),
       "profile: assume role with a missing source_profile names it (%s)", err);

    /* botocore's loop rule: a -> b -> a is refused; a profile may source itself only with keys. */
    fresh_case();
    write_home("config", "[profile a]\nrole_arn = arn:aws:iam::123456789012:role/a\nsource_profile = b\n"
                         "[profile b]\nrole_arn = arn:aws:iam::123456789012:role/b\nsource_profile = a\n");
    rc = resolve("a", &c, err, sizeof err);
    OK(rc == -1 && strstr(err, "loops back"), "profile: a source_profile loop is refused (%s)", err);

    fresh_case();
    write_home("config", "[profile x]\nrole_arn = arn:aws:iam::123456789012:role/x\ncredential_source = Nowhere\n");
    rc = resolve("x", &c, err, sizeof err);
    OK(rc == -1 && strstr(err, "Ec2InstanceMetadata"), "profile: unknown credential_source lists the valid ones (%s)", err);

    /* SSO outranks static keys in the CLI: never fall back to the keys silently. */
    fresh_case();
    write_home("config", "[profile both]\naws_access_key_id = AKIDSTATIC\naws_secret_access_key = s\n"
                         "sso_session = corp\n");
    rc = resolve("both", &c, err, sizeof err);
    OK(rc == -1 && strstr(err, "sso-session corp"), "profile: SSO profile with static keys is not half-used (%s)", err);

    /* Web identity env outranks the default profile's keys (CLI order); the token file is read. */
    fresh_case();
    setenv("AWS_ROLE_ARN", "arn:aws:iam::123456789012:role/irsa", 1);
    setenv("AWS_WEB_IDENTITY_TOKEN_FILE", "/nonexistent/token", 1);
    write_home("credentials", "[default]\naws_access_key_id = AKIDDEFAULT\naws_secret_access_key = s\n");
    rc = resolve(NULL, &c, err, sizeof err);
    OK(rc == -1 && strstr(err, "web identity") && strstr(err, "/nonexistent/token"),
       "profile: web identity env is used before the profile (%s)", err);

    /* Real session tokens are ~1-2 KB on one line: inih's default 200-byte lines would cut them. */
    fresh_case();
    char tok[3001];
    for (int i = 0; i < 3000; i++)
        tok[i] = (char)('A' + i % 26);
    tok[3000] = '\0';
    struct bt_buf b = {0};
    bt_buf_printf(&b, "[default]\naws_access_key_id = AKIDLONG\naws_secret_access_key = x\n"
                      "aws_session_token = %s\n", tok);
    write_home("credentials", b.buf);
    bt_buf_free(&b);
    rc = resolve(NULL, &c, err, sizeof err);
    OK(rc == 0 && c.session_token && strcmp(c.session_token, tok) == 0,
       "profile: 3000-byte session token read intact");

    fresh_case();
    write_home("config", "[default]\nregion = us-east-1\nthis line is not ini\n");
    rc = resolve(NULL, &c, err, sizeof err);
    OK(rc == -1 && strstr(err, "/.aws/config:3:"), "profile: malformed config names file:line (%s)", err);
    bt_creds_clear(&c);
}

/* Issue 26 breaks 2 and 7 for the shared files: read as botocore's configparser reads
 * them (indentation relative to the key above), and a line past inih's buffer is an
 * error rather than a second line. */
static bool file_exists(const char *path);
static void test_botocore_lines(void)
{
    struct bt_creds c = {0};
    char err[1024], out[64];
    struct bt_aws_profile_opts o = {0};
    fresh_case();
    write_home("credentials", "[default]\n    aws_access_key_id = AKIDINDENT\n    aws_secret_access_key = s\n");
    write_home("config", "[default]\n  region = eu-west-3\n  output = json\n");
    int rc = resolve(NULL, &c, err, sizeof err);
    OK(rc == 0 && !strcmp(c.access_key, "AKIDINDENT") && !strcmp(c.secret_key, "s"),
       "break 2 (AWS files): uniformly indented keys are keys, as botocore reads them (%s)", err);
    OK(bt_aws_resolve_region(&o, out, sizeof out, err, sizeof err) == 0 && !strcmp(out, "eu-west-3"),
       "break 2 (AWS files): an indented region is read (%s)", rc ? err : out);

    /* a nested block (s3 = then deeper lines) belongs to s3; the keys after it are read */
    fresh_case();
    write_home("credentials", "[default]\naws_access_key_id = AKIDNEST\naws_secret_access_key = s\n");
    write_home("config", "[default]\ns3 =\n    max_concurrent_requests = 10\n    region = ap-east-1\n"
                         "region = us-west-1\n");
    OK(bt_aws_resolve_region(&o, out, sizeof out, err, sizeof err) == 0 && !strcmp(out, "us-west-1"),
       "break 2 (AWS files): a nested s3 block's region is s3's, the profile's is us-west-1 (%s)", out);

    /* deeper than the key above: botocore makes it part of that value; bedtop refuses */
    fresh_case();
    write_home("credentials", "[default]\naws_access_key_id = AKIDCONT\n    aws_secret_access_key = s\n");
    rc = resolve(NULL, &c, err, sizeof err);
    OK(rc == -1 && strstr(err, "/.aws/credentials:3:") && strstr(err, "continues the value of aws_access_key_id"),
       "break 2 (AWS files): an indented line continuing a key bedtop reads is refused, naming it (%s)", err);

    /* break 7: a credential_process hidden past byte 65,536 of a comment never runs */
    fresh_case();
    char marker[700];
    snprintf(marker, sizeof marker, "%s/ran", home);
    struct bt_buf b = {0};
    bt_buf_puts(&b, "[default]\n# ");
    for (int i = 0; i < 65533; i++) /* "# " and 65,533 x fill inih's 65,535-byte read */
        bt_buf_puts(&b, "x");
    bt_buf_printf(&b, "credential_process = /bin/touch %s\n", marker);
    write_home("config", b.buf);
    bt_buf_free(&b);
    rc = resolve(NULL, &c, err, sizeof err);
    OK(rc == -1 && strstr(err, "/.aws/config:2: line longer than 65536 bytes"),
       "break 7 (AWS files): a line over 65,536 bytes is an error naming file and line (%.120s)", err);
    OK(!file_exists(marker), "break 7 (AWS files): the command hidden past it did not run");
    bt_creds_clear(&c);
}

/* Writes an executable helper script into the case's HOME. */
static void write_script(const char *name, const char *body, char *path, size_t n)
{
    snprintf(path, n, "%s/%s", home, name);
    write_file(path, body, 0700);
}

static bool file_exists(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0;
}

static void test_credential_process(void)
{
    struct bt_creds c = {0};
    char err[1024], script[700], cfg[4096], argsfile[700], pwned[700];
    fresh_case();
    snprintf(argsfile, sizeof argsfile, "%s/args.txt", home);
    snprintf(pwned, sizeof pwned, "%s/PWNED", home);
    /* Records its arguments one per line, then prints credentials. */
    write_script("creds.sh",
                 "#!/bin/sh\n"
                 "out=\"$(dirname \"$0\")/args.txt\"\n"
                 ": > \"$out\"\n"
                 "for a in \"$@\"; do printf '%s\\n' \"$a\" >> \"$out\"; done\n"
                 "printf '%s' '{\"Version\": 1, \"AccessKeyId\": \"ASIAPROCESS\", "
                 "\"SecretAccessKey\": \"procsecret\", \"SessionToken\": \"proctoken\", "
                 "\"Expiration\": \"2030-01-02T03:04:05Z\"}'\n",
                 script, sizeof script);
    snprintf(cfg, sizeof cfg,
             "[profile proc]\ncredential_process = %s \"arg with  spaces\" 'single q' back\\ slash ; touch %s\n",
             script, pwned);
    write_home("config", cfg);
    int rc = resolve("proc", &c, err, sizeof err);
    OK(rc == 0 && strcmp(c.access_key, "ASIAPROCESS") == 0 && strcmp(c.secret_key, "procsecret") == 0 &&
       c.session_token && strcmp(c.session_token, "proctoken") == 0,
       "process: credentials from the helper's JSON (%s)", rc ? err : c.source);
    OK(c.expiration == EXP_2030, "process: Expiration parsed (%lld)", (long long)c.expiration);
    OK(strstr(c.source, "credential_process") != NULL, "process: source says credential_process");
    char *args = bt_read_file(argsfile, 4096, NULL);
    struct bt_buf want = {0};
    bt_buf_printf(&want, "arg with  spaces\nsingle q\nback slash\n;\ntouch\n%s\n", pwned);
    STREQ(args, want.buf, "process: arguments arrive intact and ';' is just an argument");
    OK(!file_exists(pwned), "process: no shell ran the text after ';'");
    free(args);
    bt_buf_free(&want);

    fresh_case();
    write_script("v2.sh", "#!/bin/sh\necho '{\"Version\": 2, \"AccessKeyId\": \"A\", \"SecretAccessKey\": \"V2SECRET\"}'\n",
                 script, sizeof script);
    snprintf(cfg, sizeof cfg, "[default]\ncredential_process = %s\n", script);
    write_home("config", cfg);
    rc = resolve(NULL, &c, err, sizeof err);
    OK(rc == -1 && strstr(err, "Version 2") && !strstr(err, "V2SECRET"),
       "process: Version 2 rejected clearly (%s)", err);

    fresh_case();
    write_script("fail.sh", "#!/bin/sh\necho '{\"SecretAccessKey\": \"STDOUTSECRET\"}'\n"
                            "echo 'helper: token expired, run login' >&2\necho 'second line' >&2\nexit 1\n",
                 script, sizeof script);
    snprintf(cfg, sizeof cfg, "[default]\ncredential_process = %s --flag\n", script);
    write_home("config", cfg);
    rc = resolve(NULL, &c, err, sizeof err);
    OK(rc == -1 && strstr(err, "fail.sh") && strstr(err, "status 1") &&
       strstr(err, "helper: token expired, run login") && !strstr(err, "second line") &&
       !strstr(err, "STDOUTSECRET"),
       "process: exit 1 names the command and stderr's first line only (%s)", err);

    fresh_case();
    write_home("config", "[default]\ncredential_process = /nonexistent/bedtop-helper\n");
    rc = resolve(NULL, &c, err, sizeof err);
    /* posix_spawnp reports ENOENT, or (under valgrind) the child exits 127 */
    OK(rc == -1 && strstr(err, "bedtop-helper") &&
           (strstr(err, "cannot run") || strstr(err, "status 127")),
       "process: missing program is a clear error (%s)", err);

    fresh_case();
    write_home("config", "[default]\ncredential_process = helper \"unterminated\n");
    rc = resolve(NULL, &c, err, sizeof err);
    OK(rc == -1 && strstr(err, "unterminated"), "process: bad quoting is a clear error (%s)", err);

    fresh_case();
    write_script("big.sh", "#!/bin/sh\nhead -c 200000 /dev/zero | tr '\\0' x\n", script, sizeof script);
    snprintf(cfg, sizeof cfg, "[default]\ncredential_process = %s\n", script);
    write_home("config", cfg);
    rc = resolve(NULL, &c, err, sizeof err);
    OK(rc == -1 && strstr(err, "64 KiB"), "process: output over 64 KiB refused (%s)", err);

    fresh_case();
    write_script("hang.sh", "#!/bin/sh\nsleep 30\n", script, sizeof script);
    snprintf(cfg, sizeof cfg, "[default]\ncredential_process = %s\n", script);
    write_home("config", cfg);
    bt_aws_set_process_timeout(300);
    rc = resolve(NULL, &c, err, sizeof err);
    bt_aws_set_process_timeout(0);
    OK(rc == -1 && strstr(err, "timed out"), "process: a hung helper is killed (%s)", err);
    bt_creds_clear(&c);
}

static void test_parse_output(void)
{
    struct bt_creds c = {0};
    char err[512];
    const char *good = "{\"Version\":1,\"AccessKeyId\":\"AKID1\",\"SecretAccessKey\":\"S1\"}";
    OK(bt_aws_parse_process_output(good, strlen(good), &c, err, sizeof err) == 0 &&
       c.session_token == NULL && c.expiration == 0, "parse: minimal output, no token, no expiry");
    const char *cases[][2] = {
        {"not json", "not a JSON object"},
        {"[1,2]", "not a JSON object"},
        {"{\"AccessKeyId\":\"A\",\"SecretAccessKey\":\"PARSESECRET\"}", "Version"},
        {"{\"Version\":\"1\",\"AccessKeyId\":\"A\",\"SecretAccessKey\":\"PARSESECRET\"}", "Version"},
        {"{\"Version\":1,\"AccessKeyId\":\"A\"}", "SecretAccessKey"},
        {"{\"Version\":1,\"AccessKeyId\":\"A\",\"SecretAccessKey\":\"PARSESECRET\",\"Expiration\":\"soon\"}", "ISO 8601"},
        {"{\"Version\":1,\"AccessKeyId\":\"A B\",\"SecretAccessKey\":\"PARSESECRET\"}", "access key id"},
        {"{\"Version\":1,\"AccessKeyId\":\"A\",\"SecretAccessKey\":\"PARSESECRET\",\"SessionToken\":\"a\\nb\"}", "session token"},
    };
    for (size_t i = 0; i < BT_ARRAY_LEN(cases); i++) {
        err[0] = '\0';
        int rc = bt_aws_parse_process_output(cases[i][0], strlen(cases[i][0]), &c, err, sizeof err);
        OK(rc == -1 && strstr(err, cases[i][1]) && !strstr(err, "PARSESECRET"),
           "parse: bad output %zu rejected mentioning \"%s\" (%s)", i, cases[i][1], err);
    }
    OK(strcmp(c.access_key, "AKID1") == 0, "parse: failures leave earlier creds alone");
    /* Truncated input: the length, not the NUL, bounds the parse. */
    OK(bt_aws_parse_process_output(good, 20, &c, err, sizeof err) == -1, "parse: length bounds the input");
    bt_creds_clear(&c);
}

static void test_no_creds_message(void)
{
    struct bt_creds c = {0};
    char err[1024];
    fresh_case();
    write_home("credentials", "[other]\naws_access_key_id = AKIDOTHER\naws_secret_access_key = NEVERPRINTME\n");
    write_home("config", "[default]\nregion = us-east-1\n");
    int rc = resolve(NULL, &c, err, sizeof err);
    printf("# %s\n", err);
    OK(rc == -1 && strncmp(err, "no AWS credentials: tried environment, profile \"default\" in ", 59) == 0,
       "missing: message starts with what was tried");
    OK(strstr(err, "/.aws/credentials (no such profile)") && strstr(err, "/.aws/config (no keys)"),
       "missing: message names both files and what was in them");
    OK(strstr(err, "container credentials (not configured)") && strstr(err, "IMDSv2 (disabled)"),
       "missing: message lists container and IMDSv2");
    OK(!strstr(err, "NEVERPRINTME") && !strchr(err, '\n'), "missing: one line, no secret");

    rc = resolve("other", &c, err, sizeof err);
    OK(rc == 0, "missing: the other profile itself resolves");
    bt_creds_clear(&c);
}

static void test_region(void)
{
    char out[64], err[512];
    struct bt_aws_profile_opts o = {0};
    fresh_case();
    write_home("config", "[default]\nregion = eu-central-1\n[profile west]\nregion = us-west-2\n");
    OK(bt_aws_resolve_region(&o, out, sizeof out, err, sizeof err) == 0 && strcmp(out, "eu-central-1") == 0,
       "region: from the default profile");
    setenv("AWS_PROFILE", "west", 1);
    OK(bt_aws_resolve_region(&o, out, sizeof out, err, sizeof err) == 0 && strcmp(out, "us-west-2") == 0,
       "region: from AWS_PROFILE's profile");
    setenv("AWS_DEFAULT_REGION", "ap-south-1", 1);
    OK(bt_aws_resolve_region(&o, out, sizeof out, err, sizeof err) == 0 && strcmp(out, "ap-south-1") == 0,
       "region: AWS_DEFAULT_REGION outranks the profile");
    setenv("AWS_REGION", "ca-central-1", 1);
    OK(bt_aws_resolve_region(&o, out, sizeof out, err, sizeof err) == 0 && strcmp(out, "ca-central-1") == 0,
       "region: AWS_REGION outranks AWS_DEFAULT_REGION");
    o.region = "sa-east-1";
    OK(bt_aws_resolve_region(&o, out, sizeof out, err, sizeof err) == 0 && strcmp(out, "sa-east-1") == 0,
       "region: --region outranks everything");
    o.region = "us-east-1; rm -rf";
    OK(bt_aws_resolve_region(&o, out, sizeof out, err, sizeof err) == -1 && strstr(err, "--region"),
       "region: malformed value refused naming its source (%s)", err);
    fresh_case();
    o.region = NULL;
    OK(bt_aws_resolve_region(&o, out, sizeof out, err, sizeof err) == -1 && strstr(err, "no AWS Region"),
       "region: none is an error (%s)", err);
}

static void test_endpoint(void)
{
    char out[256];
    struct bt_aws_profile_opts o = {0};
    fresh_case();
    OK(bt_aws_endpoint(&o, "monitoring", "us-east-1", out, sizeof out) == 0 &&
       strcmp(out, "https://monitoring.us-east-1.amazonaws.com") == 0, "endpoint: default (%s)", out);
    OK(bt_aws_endpoint(&o, "servicequotas", "cn-north-1", out, sizeof out) == 0 &&
       strcmp(out, "https://servicequotas.cn-north-1.amazonaws.com.cn") == 0, "endpoint: China partition (%s)", out);
    write_home("config", "[default]\nendpoint_url = http://127.0.0.1:1001/\n");
    OK(bt_aws_endpoint(&o, "monitoring", "us-east-1", out, sizeof out) == 0 &&
       strcmp(out, "http://127.0.0.1:1001") == 0, "endpoint: profile endpoint_url (%s)", out);
    setenv("AWS_ENDPOINT_URL", "http://127.0.0.1:1002", 1);
    OK(bt_aws_endpoint(&o, "monitoring", "us-east-1", out, sizeof out) == 0 &&
       strcmp(out, "http://127.0.0.1:1002") == 0, "endpoint: AWS_ENDPOINT_URL outranks the profile");
    setenv("AWS_ENDPOINT_URL_CLOUDWATCH", "http://127.0.0.1:1003", 1);
    setenv("AWS_ENDPOINT_URL_SERVICE_QUOTAS", "http://127.0.0.1:1004", 1);
    OK(bt_aws_endpoint(&o, "monitoring", "us-east-1", out, sizeof out) == 0 &&
       strcmp(out, "http://127.0.0.1:1003") == 0, "endpoint: AWS_ENDPOINT_URL_CLOUDWATCH for monitoring");
    OK(bt_aws_endpoint(&o, "servicequotas", "us-east-1", out, sizeof out) == 0 &&
       strcmp(out, "http://127.0.0.1:1004") == 0, "endpoint: AWS_ENDPOINT_URL_SERVICE_QUOTAS for servicequotas");
    o.endpoint_url = "http://127.0.0.1:1005";
    OK(bt_aws_endpoint(&o, "monitoring", "us-east-1", out, sizeof out) == 0 &&
       strcmp(out, "http://127.0.0.1:1005") == 0, "endpoint: --endpoint-url outranks everything");
    o.endpoint_url = NULL;
    setenv("AWS_IGNORE_CONFIGURED_ENDPOINT_URLS", "true", 1);
    OK(bt_aws_endpoint(&o, "monitoring", "us-east-1", out, sizeof out) == 0 &&
       strcmp(out, "https://monitoring.us-east-1.amazonaws.com") == 0,
       "endpoint: AWS_IGNORE_CONFIGURED_ENDPOINT_URLS skips env and profile");
    o.endpoint_url = "ftp://127.0.0.1";
    OK(bt_aws_endpoint(&o, "monitoring", "us-east-1", out, sizeof out) == -1, "endpoint: non-http URL refused");
    o.endpoint_url = NULL;
    OK(bt_aws_endpoint(&o, "monitoring", "", out, sizeof out) == -1, "endpoint: no Region, no default");
    OK(bt_aws_endpoint(&o, "monitoring", "us-east-1", out, 10) == -1, "endpoint: small buffer refused");
}

/* STS as botocore picks it: Regional by default, the global endpoint for the legacy Regions
 * with sts_regional_endpoints = legacy (or no Region), overrides from AWS_ENDPOINT_URL_STS /
 * AWS_ENDPOINT_URL, never from --endpoint-url. */
static void test_sts_endpoint(void)
{
    char url[256], region[32];
    fresh_case();
    write_home("config", "[profile r]\nregion = eu-west-1\n[profile legacy]\nregion = us-east-1\n"
                         "sts_regional_endpoints = legacy\n[profile legacy-hk]\nregion = ap-east-1\n"
                         "sts_regional_endpoints = legacy\n[profile none]\n");
    struct bt_aws_profile_opts o = {.profile = "r", .endpoint_url = "http://127.0.0.1:9"};
    OK(bt_aws_sts_endpoint(&o, url, sizeof url, region, sizeof region) == 0 &&
       !strcmp(url, "https://sts.eu-west-1.amazonaws.com") && !strcmp(region, "eu-west-1"),
       "sts: Regional endpoint by default, --endpoint-url not applied (%s %s)", url, region);
    o = (struct bt_aws_profile_opts){.profile = "legacy"};
    OK(bt_aws_sts_endpoint(&o, url, sizeof url, region, sizeof region) == 0 &&
       !strcmp(url, "https://sts.amazonaws.com") && !strcmp(region, "us-east-1"),
       "sts: legacy mode in us-east-1 is the global endpoint (%s)", url);
    o = (struct bt_aws_profile_opts){.profile = "legacy-hk"};
    OK(bt_aws_sts_endpoint(&o, url, sizeof url, region, sizeof region) == 0 &&
       !strcmp(url, "https://sts.ap-east-1.amazonaws.com"),
       "sts: legacy mode outside the legacy list stays Regional (%s)", url);
    o = (struct bt_aws_profile_opts){.profile = "none"};
    OK(bt_aws_sts_endpoint(&o, url, sizeof url, region, sizeof region) == 0 &&
       !strcmp(url, "https://sts.amazonaws.com") && !strcmp(region, "us-east-1"),
       "sts: no Region at all is the global endpoint signed for us-east-1 (%s %s)", url, region);
    setenv("AWS_STS_REGIONAL_ENDPOINTS", "legacy", 1);
    o = (struct bt_aws_profile_opts){.profile = "r", .region = "us-west-2"};
    OK(bt_aws_sts_endpoint(&o, url, sizeof url, region, sizeof region) == 0 &&
       !strcmp(url, "https://sts.amazonaws.com"), "sts: AWS_STS_REGIONAL_ENDPOINTS=legacy (%s)", url);
    setenv("AWS_ENDPOINT_URL", "http://127.0.0.1:8/", 1);
    OK(bt_aws_sts_endpoint(&o, url, sizeof url, region, sizeof region) == 0 && !strcmp(url, "http://127.0.0.1:8"),
       "sts: AWS_ENDPOINT_URL applies (%s)", url);
    setenv("AWS_ENDPOINT_URL_STS", "http://127.0.0.1:7", 1);
    OK(bt_aws_sts_endpoint(&o, url, sizeof url, region, sizeof region) == 0 && !strcmp(url, "http://127.0.0.1:7"),
       "sts: AWS_ENDPOINT_URL_STS wins over AWS_ENDPOINT_URL (%s)", url);
}

static void test_refresh_and_perms(void)
{
    struct bt_creds c = {0};
    OK(!bt_creds_need_refresh(&c, 1000, 300), "refresh: no expiration, never");
    c.expiration = 10000;
    OK(!bt_creds_need_refresh(&c, 10000 - 301, 300), "refresh: 301 s before expiry with a 300 s margin: not yet");
    OK(bt_creds_need_refresh(&c, 10000 - 300, 300), "refresh: at the margin: yes");
    OK(bt_creds_need_refresh(&c, 20000, 300), "refresh: expired: yes");

    fresh_case();
    char path[700], msg[1024];
    snprintf(path, sizeof path, "%s/.aws/credentials", home);
    write_file(path, "[default]\n", 0644);
    OK(bt_aws_check_file_perms(path, msg, sizeof msg) && strstr(msg, "0644") && strstr(msg, path),
       "perms: 0644 warned (%s)", msg);
    chmod(path, 0600);
    OK(!bt_aws_check_file_perms(path, msg, sizeof msg), "perms: 0600 quiet");
    char got[700];
    bt_aws_credentials_file(got, sizeof got);
    STREQ(got, path, "perms: bt_aws_credentials_file is the default path");
}

/* ---- the HTTP sources, against a python3 fake on 127.0.0.1 ---- */

static const char fake_py[] =
    "import http.server, json, sys\n"
    "IMDS_TOKEN = 'imds-session-token-abc'\n"
    "def creds(akid): return json.dumps({'Code': 'Success', 'AccessKeyId': akid,\n"
    "    'SecretAccessKey': 'httpsecret', 'Token': 'httptoken', 'Expiration': '2030-01-02T03:04:05Z'})\n"
    "class H(http.server.BaseHTTPRequestHandler):\n"
    "    def log_message(self, *a): pass\n"
    "    def send(self, code, body):\n"
    "        b = body.encode()\n"
    "        self.send_response(code)\n"
    "        self.send_header('Content-Length', str(len(b)))\n"
    "        self.end_headers()\n"
    "        self.wfile.write(b)\n"
    "    def do_PUT(self):\n"
    "        if self.path != '/latest/api/token': return self.send(404, '')\n"
    "        if self.headers.get('X-aws-ec2-metadata-token-ttl-seconds') != '21600': return self.send(400, 'ttl')\n"
    "        self.send(200, IMDS_TOKEN)\n"
    "    def do_GET(self):\n"
    "        p = self.path\n"
    "        if p.startswith('/latest/'):\n"
    "            if self.headers.get('X-aws-ec2-metadata-token') != IMDS_TOKEN: return self.send(401, '')\n"
    "            if p == '/latest/meta-data/iam/security-credentials/': return self.send(200, 'bedtop-test-role\\n')\n"
    "            if p == '/latest/meta-data/iam/security-credentials/bedtop-test-role': return self.send(200, creds('ASIAIMDS'))\n"
    "            return self.send(404, '')\n"
    "        if p == '/container/creds':\n"
    "            if self.headers.get('Authorization') != 'Bearer container-auth-token': return self.send(401, 'denied')\n"
    "            return self.send(200, creds('ASIACONTAINER'))\n"
    "        self.send(404, '')\n"
    "s = http.server.HTTPServer(('127.0.0.1', 0), H)\n"
    "print(s.server_address[1], flush=True)\n"
    "s.serve_forever()\n";

static pid_t fake_pid = -1;

/* Starts the fake; it prints the port it bound (no free-port race). Returns the port or 0. */
static int start_fake(void)
{
    char script[400];
    snprintf(script, sizeof script, "%s/fake_aws.py", root);
    write_file(script, fake_py, 0600);
    int p[2];
    if (pipe(p) != 0)
        return 0;
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_adddup2(&fa, p[1], 1);
    posix_spawn_file_actions_addclose(&fa, p[0]);
    char *argv[] = {"python3", script, NULL};
    int rc = posix_spawnp(&fake_pid, "python3", &fa, NULL, argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    close(p[1]);
    if (rc != 0) {
        close(p[0]);
        fake_pid = -1;
        return 0;
    }
    char line[32] = "";
    size_t n = 0;
    struct pollfd pf = {p[0], POLLIN, 0};
    while (n < sizeof line - 1 && poll(&pf, 1, 10000) > 0) {
        ssize_t r = read(p[0], line + n, 1);
        if (r <= 0 || line[n] == '\n')
            break;
        n++;
    }
    line[n] = '\0';
    close(p[0]);
    return atoi(line);
}

static void stop_fake(void)
{
    if (fake_pid > 0) {
        kill(fake_pid, SIGTERM);
        waitpid(fake_pid, NULL, 0);
        fake_pid = -1;
    }
}

static void test_http_sources(void)
{
    struct bt_creds c = {0};
    char err[1024], url[256];
    int port = start_fake();
    OK(port > 0, "fake: python3 fake endpoint started on 127.0.0.1:%d", port);
    if (port <= 0)
        return;

    fresh_case();
    snprintf(url, sizeof url, "http://127.0.0.1:%d/container/creds", port);
    setenv("AWS_CONTAINER_CREDENTIALS_FULL_URI", url, 1);
    setenv("AWS_CONTAINER_AUTHORIZATION_TOKEN", "Bearer container-auth-token", 1);
    int rc = resolve(NULL, &c, err, sizeof err);
    OK(rc == 0 && strcmp(c.access_key, "ASIACONTAINER") == 0 && strcmp(c.secret_key, "httpsecret") == 0 &&
       c.session_token && strcmp(c.session_token, "httptoken") == 0 && c.expiration == EXP_2030,
       "container: credentials with the Authorization token (%s)", rc ? err : c.source);
    OK(strstr(c.source, "container credentials") != NULL, "container: source says so");

    char tfile[700];
    snprintf(tfile, sizeof tfile, "%s/token", home);
    write_file(tfile, "Bearer container-auth-token\n", 0600);
    setenv("AWS_CONTAINER_AUTHORIZATION_TOKEN", "Bearer wrong", 1);
    setenv("AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE", tfile, 1);
    rc = resolve(NULL, &c, err, sizeof err);
    OK(rc == 0 && strcmp(c.access_key, "ASIACONTAINER") == 0,
       "container: the token file outranks the token variable (%s)", rc ? err : "");

    unsetenv("AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE");
    rc = resolve(NULL, &c, err, sizeof err);
    OK(rc == -1 && strstr(err, "HTTP 401") && !strstr(err, "Bearer wrong"),
       "container: refused token is an error without the token (%s)", err);

    setenv("AWS_CONTAINER_CREDENTIALS_FULL_URI", "http://0.0.0.0:1/creds", 1);
    rc = resolve(NULL, &c, err, sizeof err);
    OK(rc == -1 && strstr(err, "refusing"), "container: plain http to a non-loopback host refused (%s)", err);

    fresh_case();
    snprintf(url, sizeof url, "http://127.0.0.1:%d/", port);
    setenv("AWS_EC2_METADATA_SERVICE_ENDPOINT", url, 1);
    unsetenv("AWS_EC2_METADATA_DISABLED");
    rc = resolve(NULL, &c, err, sizeof err);
    OK(rc == 0 && strcmp(c.access_key, "ASIAIMDS") == 0 && c.session_token && c.expiration == EXP_2030,
       "imds: token PUT, role list, role credentials (%s)", rc ? err : c.source);
    OK(strstr(c.source, "bedtop-test-role") != NULL, "imds: source names the role (%s)", c.source);
    stop_fake();

    /* Nothing listens now: the chain reports IMDSv2's failure in the tried list. */
    rc = resolve(NULL, &c, err, sizeof err);
    char want[128];
    snprintf(want, sizeof want, "IMDSv2 (http://127.0.0.1:%d:", port);
    OK(rc == -1 && strstr(err, "no AWS credentials") && strstr(err, want),
       "imds: unreachable endpoint listed in the message (%s)", err);
    bt_creds_clear(&c);
}

static int rm_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st;
    (void)flag;
    (void)ftw;
    return remove(path);
}

int main(void)
{
    snprintf(root, sizeof root, "%s/bedtop-awsauth.XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
    if (!mkdtemp(root)) {
        printf("not ok - mkdtemp: %s\n", strerror(errno));
        return 1;
    }
    test_env();
    test_profiles();
    test_credential_process();
    test_parse_output();
    test_no_creds_message();
    test_region();
    test_botocore_lines();
    test_endpoint();
    test_sts_endpoint();
    test_refresh_and_perms();
    test_http_sources();
    stop_fake();
    nftw(root, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
    return tap_done();
}
