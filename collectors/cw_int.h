/* Between the CloudWatch files (cw_wire.c, cloudwatch.c, cw_discover.c): the
 * protocol's constants. Not for other rooms. */
#ifndef BEDTOP_CW_INT_H
#define BEDTOP_CW_INT_H

#define NS_RUNTIME "AWS/Bedrock"
#define NS_MANTLE "AWS/BedrockMantle"
#define CW_TARGET "GraniteServiceVersion20100801."
#define CW_CTYPE "application/x-amz-json-1.0"
#define MAX_PAGES 1000       /* a pagination that never ends is an error */
#endif
