/* Credentials from the environment: AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, optional
 * AWS_SESSION_TOKEN and AWS_CREDENTIAL_EXPIRATION (also credential_source = Environment). */
#include <stdlib.h>

#include "aws/creds_int.h"

bool bt_aws_env_static_present(void)
{
    return bt_aws_env("AWS_ACCESS_KEY_ID") || bt_aws_env("AWS_SECRET_ACCESS_KEY");
}

int bt_aws_plan_env(struct plan *pl, char *err, size_t errlen)
{
    const char *akid = bt_aws_env("AWS_ACCESS_KEY_ID");
    const char *secret = bt_aws_env("AWS_SECRET_ACCESS_KEY");
    if (!akid || !secret) {
        bt_aws_seterr(err, errlen, "environment: %s is set but %s is not",
               akid ? "AWS_ACCESS_KEY_ID" : "AWS_SECRET_ACCESS_KEY",
               akid ? "AWS_SECRET_ACCESS_KEY" : "AWS_ACCESS_KEY_ID");
        return -1;
    }
    if (bt_aws_creds_set(&pl->creds, akid, secret, getenv("AWS_SESSION_TOKEN"), "environment", err, errlen) != 0)
        return -1;
    const char *exp = bt_aws_env("AWS_CREDENTIAL_EXPIRATION");
    if (exp && !bt_parse_iso(exp, &pl->creds.expiration)) {
        bt_aws_seterr(err, errlen, "environment: AWS_CREDENTIAL_EXPIRATION is not an ISO 8601 time");
        return -1;
    }
    bt_strlcpy(pl->creds.source, "environment", sizeof pl->creds.source);
    pl->kind = S_STATIC;
    return 0;
}

