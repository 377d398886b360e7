/* STS answers parsed with expat, form encoding, ARN identities and the IAM Identity
 * Center cache file name. Known answers from outside: the AssumeRole response is the
 * example of the STS API reference (AssumeRole, "Example"); its Expiration
 * 2019-11-09T13:34:41Z is 1573306481 (python3: calendar.timegm); the cache names are
 * `printf %s NAME | sha1sum` as botocore's SSOTokenLoader computes them. */
#include <stdio.h>
#include <string.h>

#include "aws/sts.h"
#include "tests/tap.h"

static const char assume_ok[] =
    "<AssumeRoleResponse xmlns=\"https://sts.amazonaws.com/doc/2011-06-15/\">\n"
    "<AssumeRoleResult>\n"
    "<SourceIdentity>Alice</SourceIdentity>\n"
    "  <AssumedRoleUser>\n"
    "    <Arn>arn:aws:sts::123456789012:assumed-role/demo/TestAR</Arn>\n"
    "    <AssumedRoleId>ARO123EXAMPLE123:TestAR</AssumedRoleId>\n"
    "  </AssumedRoleUser>\n"
    "  <Credentials>\n"
    "    <AccessKeyId>ASIAIOSFODNN7EXAMPLE</AccessKeyId>\n"
    "    <SecretAccessKey>wJalrXUtnFEMI/K7MDENG/bPxRfiCYzEXAMPLEKEY</SecretAccessKey>\n"
    "    <SessionToken>\n"
    "     AQoDYXdzEPT//////////wEXAMPLEtc764bNrC9SAPBSM22wDOk4x4HIZ8j4FZTwdQW\n"
    "    </SessionToken>\n"
    "    <Expiration>2019-11-09T13:34:41Z</Expiration>\n"
    "  </Credentials>\n"
    "  <PackedPolicySize>6</PackedPolicySize>\n"
    "</AssumeRoleResult>\n"
    "<ResponseMetadata>\n"
    "  <RequestId>c6104cbe-af31-11e0-8154-cbc7ccf896c7</RequestId>\n"
    "</ResponseMetadata>\n"
    "</AssumeRoleResponse>\n";

static const char error_xml[] =
    "<ErrorResponse xmlns=\"https://sts.amazonaws.com/doc/2011-06-15/\">\n"
    "  <Error>\n    <Type>Sender</Type>\n    <Code>RegionDisabledException</Code>\n"
    "    <Message>STS is not activated\nin this region for account:123456789012.</Message>\n"
    "  </Error>\n  <RequestId>c6104cbe-af31-11e0-8154-cbc7ccf896c7</RequestId>\n</ErrorResponse>\n";

int main(void)
{
    struct bt_sts_result r;
    int rc = bt_sts_parse(assume_ok, strlen(assume_ok), &r);
    OK(rc == 0, "sts: the STS reference's AssumeRole example parses (%s)", r.message);
    STREQ(r.creds.access_key, "ASIAIOSFODNN7EXAMPLE", "sts: AccessKeyId");
    STREQ(r.creds.secret_key, "wJalrXUtnFEMI/K7MDENG/bPxRfiCYzEXAMPLEKEY", "sts: SecretAccessKey");
    STREQ(r.creds.session_token ? r.creds.session_token : "",
          "AQoDYXdzEPT//////////wEXAMPLEtc764bNrC9SAPBSM22wDOk4x4HIZ8j4FZTwdQW", "sts: SessionToken trimmed");
    OK(r.creds.expiration == 1573306481, "sts: Expiration 2019-11-09T13:34:41Z = 1573306481 (%lld)",
       (long long)r.creds.expiration);
    STREQ(r.arn, "arn:aws:sts::123456789012:assumed-role/demo/TestAR", "sts: AssumedRoleUser Arn");
    bt_sts_result_clear(&r);
    OK(r.creds.session_token == NULL && r.creds.secret_key[0] == '\0', "sts: clear wipes the result");

    rc = bt_sts_parse(error_xml, strlen(error_xml), &r);
    OK(rc == 1, "sts: ErrorResponse is an error answer (rc %d)", rc);
    STREQ(r.code, "RegionDisabledException", "sts: error Code");
    OK(strstr(r.message, "not activated in this") && !strchr(r.message, '\n'),
       "sts: error Message kept, control characters replaced (%s)", r.message);
    OK(r.creds.access_key[0] == '\0', "sts: no credentials from an error");
    bt_sts_result_clear(&r);

    static const char prefixed[] =
        "<sts:AssumeRoleWithWebIdentityResponse xmlns:sts=\"https://sts.amazonaws.com/doc/2011-06-15/\">"
        "<sts:AssumeRoleWithWebIdentityResult><sts:Credentials><sts:AccessKeyId>ASIAX</sts:AccessKeyId>"
        "<sts:SecretAccessKey>s&amp;k</sts:SecretAccessKey><sts:SessionToken>t</sts:SessionToken>"
        "<sts:Expiration>2019-11-09T13:34:41.000Z</sts:Expiration></sts:Credentials>"
        "</sts:AssumeRoleWithWebIdentityResult></sts:AssumeRoleWithWebIdentityResponse>";
    rc = bt_sts_parse(prefixed, strlen(prefixed), &r);
    OK(rc == 0 && !strcmp(r.creds.secret_key, "s&k") && r.creds.expiration == 1573306481,
       "sts: namespace prefixes, entities and fractional seconds are XML, not text (rc %d, %s)", rc, r.message);
    bt_sts_result_clear(&r);

    static const char *const bad[] = {
        "", "not xml", "<AssumeRoleResponse><AssumeRoleResult>", /* truncated */
        "<AssumeRoleResponse><AssumeRoleResult><Credentials><AccessKeyId>A</AccessKeyId>"
        "</Credentials></AssumeRoleResult></AssumeRoleResponse>",           /* no secret */
        "<AssumeRoleResponse><AssumeRoleResult><Credentials><AccessKeyId>A</AccessKeyId><SecretAccessKey>S"
        "</SecretAccessKey><Expiration>soon</Expiration></Credentials></AssumeRoleResult></AssumeRoleResponse>",
        "<Other/>",
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        rc = bt_sts_parse(bad[i], strlen(bad[i]), &r);
        OK(rc == -1 && r.message[0] && r.creds.access_key[0] == '\0', "sts: malformed answer %zu refused (%s)", i,
           r.message);
        bt_sts_result_clear(&r);
    }

    struct bt_buf b = {0};
    bt_form_add(&b, "Action", "AssumeRole");
    bt_form_add(&b, "RoleSessionName", "a b/c+d=e~f.g_h-i@j");
    STREQ(bt_buf_str(&b), "Action=AssumeRole&RoleSessionName=a%20b%2Fc%2Bd%3De~f.g_h-i%40j",
          "form: RFC 3986 encoding, & between pairs");
    bt_buf_free(&b);

    char acct[16], role[64];
    OK(bt_arn_identity("arn:aws:sts::123456789012:assumed-role/demo/TestAR", acct, sizeof acct, role, sizeof role) &&
       !strcmp(acct, "123456789012") && !strcmp(role, "demo"), "arn: assumed-role -> account and role");
    OK(bt_arn_identity("arn:aws-cn:iam::123456789012:role/path/Deploy", acct, sizeof acct, role, sizeof role) &&
       !strcmp(role, "Deploy"), "arn: role with a path -> its name");
    OK(!bt_arn_identity("arn:aws:sts::12345:assumed-role/x/y", acct, sizeof acct, role, sizeof role) &&
       !bt_arn_identity("nonsense", acct, sizeof acct, role, sizeof role), "arn: malformed refused");

    char name[64];
    bt_sso_cache_name("corp", name, sizeof name);
    STREQ(name, "ee0bfd2552fbd840c02cc48b6e823320543c450f.json", "sso: cache file of session \"corp\"");
    bt_sso_cache_name("https://my-sso-portal.awsapps.com/start", name, sizeof name);
    STREQ(name, "c7aaaf71fcc8777ae2475525ed049d39fe16c484.json", "sso: legacy cache file of the start URL");
    return tap_done();
}
