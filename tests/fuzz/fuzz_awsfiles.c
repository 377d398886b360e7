/* The AWS shared files (~/.aws/credentials and ~/.aws/config) through the
 * credential chain's own entry points. The input is split at its first NUL
 * byte: before it the credentials file, after it the config file (no NUL:
 * both files get the whole input). Real files in a private temp dir, since
 * the chain reads paths (AWS_SHARED_CREDENTIALS_FILE / AWS_CONFIG_FILE).
 * Never runs anything: the chain is planned with no event loop (bt_aws_creds_start
 * with no bt_http), so a profile that needs STS, IAM Identity Center, a
 * credential_process, container credentials or IMDS is answered with an error
 * instead: no process starts and no packet is sent. Inputs naming a process are
 * skipped all the same. */
#include <ctype.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "aws/awsauth.h"
#include "core/util.h"
#include "tests/fuzz/fuzz.h"

static char creds_path[256], config_path[256];

static void setup(void)
{
    if (creds_path[0])
        return;
    char dir[] = "/tmp/bedtop-fuzz-aws.XXXXXX";
    if (!mkdtemp(dir))
        abort();
    snprintf(creds_path, sizeof creds_path, "%s/credentials", dir);
    snprintf(config_path, sizeof config_path, "%s/config", dir);
    setenv("AWS_SHARED_CREDENTIALS_FILE", creds_path, 1);
    setenv("AWS_CONFIG_FILE", config_path, 1);
    setenv("AWS_EC2_METADATA_DISABLED", "true", 1);
    static const char *const unset[] = {
        "AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_PROFILE",
        "AWS_REGION", "AWS_DEFAULT_REGION", "AWS_ENDPOINT_URL", "AWS_ENDPOINT_URL_CLOUDWATCH",
        "AWS_ENDPOINT_URL_SERVICE_QUOTAS", "AWS_CONTAINER_CREDENTIALS_FULL_URI",
        "AWS_CONTAINER_CREDENTIALS_RELATIVE_URI", "AWS_ROLE_ARN", "AWS_WEB_IDENTITY_TOKEN_FILE",
        "AWS_IGNORE_CONFIGURED_ENDPOINT_URLS", "AWS_ENDPOINT_URL_STS", "AWS_ENDPOINT_URL_SSO",
        "AWS_ENDPOINT_URL_SSO_OIDC", "AWS_ROLE_SESSION_NAME", "AWS_STS_REGIONAL_ENDPOINTS"};
    setenv("HOME", dir, 1); /* ~/.aws/sso/cache is never the real one */
    for (size_t i = 0; i < BT_ARRAY_LEN(unset); i++)
        unsetenv(unset[i]);
}

static void put(const char *path, const uint8_t *p, size_t n)
{
    FILE *f = fopen(path, "wb");
    if (!f)
        abort();
    if (n && fwrite(p, 1, n, f) != n)
        abort();
    fclose(f);
}

/* case-insensitive "process" anywhere: then the input could start a program */
static bool names_process(const uint8_t *p, size_t n)
{
    static const char word[] = "process";
    size_t w = sizeof word - 1;
    for (size_t i = 0; i + w <= n; i++) {
        size_t k = 0;
        while (k < w && tolower(p[i + k]) == word[k])
            k++;
        if (k == w)
            return true;
    }
    return false;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    setup();
    if (names_process(data, size))
        return 0;
    const uint8_t *z = memchr(data, 0, size);
    if (z) {
        put(creds_path, data, (size_t)(z - data));
        put(config_path, z + 1, size - (size_t)(z - data) - 1);
    } else {
        put(creds_path, data, size);
        put(config_path, data, size);
    }
    static const char *const profiles[] = {NULL, "prod"};
    for (size_t i = 0; i < BT_ARRAY_LEN(profiles); i++) {
        struct bt_aws_profile_opts o = {.profile = profiles[i]};
        struct bt_creds c;
        memset(&c, 0, sizeof c);
        char err[512] = "";
        int rc = bt_aws_creds_start(NULL, &o, &c, NULL, NULL, NULL, err, sizeof err);
        FUZZ_NEED_ERR(rc == 0, err);
        bt_creds_clear(&c);
        char region[64], url[512];
        err[0] = '\0';
        rc = bt_aws_resolve_region(&o, region, sizeof region, err, sizeof err);
        FUZZ_NEED_ERR(rc == 0, err);
        if (rc == 0)
            (void)bt_aws_endpoint(&o, "monitoring", region, url, sizeof url);
    }
    return 0;
}
