// Reads a console form post (application/x-www-form-urlencoded or multipart without files) within a
// byte limit, as plain string fields. Files and repeated fields other than the listed ones are ignored.
import { limitedBody } from '../fetch/body-limit.ts';
import { ApiError } from '../errors.ts';

export type FormFields = Record<string, string | string[]>;

export async function readForm(
  request: Request,
  maxBytes: number,
  repeated: readonly string[] = [],
): Promise<FormFields> {
  const type = request.headers.get('content-type') ?? '';
  const tooLarge = () => new ApiError('payload_too_large', `the form is over the limit of ${maxBytes} bytes`);
  const body = limitedBody(request, maxBytes, tooLarge);
  if (!body || !/^(application\/x-www-form-urlencoded|multipart\/form-data)\b/i.test(type)) return {};
  let form: FormData;
  try {
    form = await new Response(body.stream, { headers: { 'content-type': type } }).formData();
  } catch {
    if (body.exceeded()) throw tooLarge();
    return {};
  }
  const fields: FormFields = {};
  for (const [name, value] of form) {
    if (typeof value !== 'string') continue;
    if (repeated.includes(name)) fields[name] = [...((fields[name] as string[] | undefined) ?? []), value];
    else if (!(name in fields)) fields[name] = value;
  }
  return fields;
}

export const field = (fields: FormFields, name: string): string => {
  const value = fields[name];
  return typeof value === 'string' ? value : '';
};
