// Nova's parameter_types.boolean: JSON booleans and these spellings.
export const BOOLISH: readonly (string | boolean)[] = [
  true,
  'True',
  'TRUE',
  'true',
  '1',
  'ON',
  'On',
  'on',
  'YES',
  'Yes',
  'yes',
  false,
  'False',
  'FALSE',
  'false',
  '0',
  'OFF',
  'Off',
  'off',
  'NO',
  'No',
  'no',
];

/** The boolean a Nova boolean parameter means, or undefined when it is not one. */
export function boolish(v: unknown): boolean | undefined {
  const at = BOOLISH.indexOf(v as string | boolean);
  if (at < 0) return undefined;
  return at < BOOLISH.length / 2;
}
