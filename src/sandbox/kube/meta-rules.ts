// ValidateObjectMeta's rules for labels and annotations (apimachinery's validation), checked on
// every write through the API: label keys and annotation keys are qualified names, label values
// are label values (63 characters at most), annotations take 256 KiB in all. Each failure is a
// cause of a 422.
import type { StatusCause } from './types.ts';

const NAME = /^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$/;
const VALUE = /^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$/;
const DNS_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
const TOTAL_ANNOTATIONS = 256 * 1024;

const NAME_RULE =
  "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')";
const VALUE_RULE =
  "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')";
const PREFIX_RULE =
  "prefix part a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')";

const bad = (field: string, v: string, why: string): StatusCause => ({
  reason: 'FieldValueInvalid',
  field,
  message: `Invalid value: ${JSON.stringify(v)}: ${why}`,
});

/** The problems of a qualified name ("prefix/name" or "name"). */
function qualifiedName(field: string, key: string): StatusCause[] {
  const parts = key.split('/');
  const [prefix, name] = parts.length === 2 ? parts : [undefined, key];
  const out: StatusCause[] = [];
  if (parts.length > 2 || name === undefined)
    return [
      bad(
        field,
        key,
        `a qualified name ${NAME_RULE} with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')`,
      ),
    ];
  if (prefix !== undefined && (prefix.length > 253 || !prefix.split('.').every((l) => DNS_LABEL.test(l))))
    out.push(bad(field, key, PREFIX_RULE));
  if (name.length === 0) out.push(bad(field, key, 'name part must be non-empty'));
  else if (name.length > 63) out.push(bad(field, key, 'name part must be no more than 63 characters'));
  if (name.length > 0 && !NAME.test(name)) out.push(bad(field, key, NAME_RULE));
  return out;
}

/** Every label and annotation problem of `meta` (none: valid). Values are strings by now (decode.ts). */
export function metaViolations(meta: {
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
}): StatusCause[] {
  const out: StatusCause[] = [];
  for (const [k, v] of Object.entries(meta.labels ?? {})) {
    out.push(...qualifiedName('metadata.labels', k));
    if (v.length > 63) out.push(bad('metadata.labels', v, 'must be no more than 63 characters'));
    if (!VALUE.test(v)) out.push(bad('metadata.labels', v, VALUE_RULE));
  }
  let total = 0;
  for (const [k, v] of Object.entries(meta.annotations ?? {})) {
    out.push(...qualifiedName('metadata.annotations', k.toLowerCase()));
    total += k.length + Buffer.byteLength(v);
  }
  if (total > TOTAL_ANNOTATIONS)
    out.push({
      reason: 'FieldValueTooLong',
      field: 'metadata.annotations',
      message: `Too long: must have at most ${TOTAL_ANNOTATIONS} bytes`,
    });
  return out;
}
