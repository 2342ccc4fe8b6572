// What a person gives to get an account or a seat in one: an email address, a name and a password, each
// within its bounds (limits.ts). One predicate each, asked by every form and endpoint that takes them;
// the wording of a refusal is the adapter's.
import { EMAIL_MAX_LENGTH, NAME_MAX_LENGTH, PASSWORD_MAX_LENGTH, PASSWORD_MIN_LENGTH } from './limits.ts';

/** Something@something.something, no spaces: what a mailbox looks like, without claiming it exists. */
export const EMAIL_PATTERN = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;

/** An email address (already trimmed) we could store. */
export const isEmailAddress = (email: string): boolean => email.length <= EMAIL_MAX_LENGTH && EMAIL_PATTERN.test(email);

/** A name (already trimmed): not empty, at most NAME_MAX_LENGTH characters. */
export const isName = (name: string): boolean => name !== '' && name.length <= NAME_MAX_LENGTH;

/** A new password: PASSWORD_MIN_LENGTH to PASSWORD_MAX_LENGTH characters. */
export const isNewPassword = (password: string): boolean =>
  password.length >= PASSWORD_MIN_LENGTH && password.length <= PASSWORD_MAX_LENGTH;
