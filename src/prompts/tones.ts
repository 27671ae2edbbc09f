/** Tones `edit_for_tone` proposes (completion); any other tone the user names is fine too. */
export const TONES = [
  'authoritative',
  'casual',
  'concise',
  'confident',
  'conversational',
  'empathetic',
  'formal',
  'friendly',
  'persuasive',
  'playful',
  'technical',
  'warm',
] as const;
