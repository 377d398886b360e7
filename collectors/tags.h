/* Tags of application inference profiles (issue 35's shares by tag): with the config's
 * attribute_by = tag:KEY, ListTagsForResource (Bedrock control plane, REST-JSON, SigV4
 * service "bedrock": POST /listTagsForResource, body {"resourceARN": ARN}, answer
 * {"tags": [{"key", "value"}]}, as botocore's bedrock model has it) on each route whose
 * model is such a profile, at start and every BT_TAGS_REFRESH; the answers are cached
 * between runs like the profiles' ($XDG_CACHE_HOME/bedtop/tags.json, 0600). Each route
 * hears one BT_EVCODE_TAG event with the tag's value, or BT_EVCODE_TAG_UNKNOWN with why
 * (a refused call is the reason, never an error of the route). */
#ifndef BEDTOP_TAGS_H
#define BEDTOP_TAGS_H
#include <stdbool.h>
#include <stddef.h>

#include "collectors/collector.h"

extern const struct bt_collector_ops bt_tags_collector;

#define BT_TAGS_REFRESH (6 * 3600) /* tags change by hand, rarely */

/* The value of tag `key` in a ListTagsForResource answer: true with *found set
 * (false: the profile has no such tag); false when the answer is malformed (err). A
 * value that is not printable text is refused as malformed. */
bool bt_tags_parse(const char *body, size_t len, const char *key, bool *found, char *value,
                   size_t n, char *err, size_t errlen);
#endif
