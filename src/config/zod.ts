// zod/mini, the config's and the record's schema library, with zod's English messages: classic zod
// sets them when imported, mini leaves every issue as "Invalid input".
import * as z from 'zod/mini';
import en from 'zod/v4/locales/en.js';

z.config(en());

export * from 'zod/mini';
