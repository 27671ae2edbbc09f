import { detectLanguage } from './language-detect.js';

describe('detectLanguage', () => {
  it.each([
    ['en', 'The garden is a source of joy for the children, and this is what you need from it in the spring.'],
    ['fr', 'Le jardin est une source de joie pour les enfants et les parents, avec des fleurs qui sont belles.'],
    ['de', 'Der Garten ist eine Quelle der Freude für die Kinder und die Eltern, und wir sind nicht allein.'],
    ['es', 'El jardín es una fuente de alegría para los niños y las familias, y no se puede comprar con dinero.'],
    ['it', 'Il giardino è una fonte di gioia per i bambini e per gli adulti, che non sono mai soli nella natura.'],
    ['pt', 'O jardim é uma fonte de alegria para os filhos e para os pais, que não estão sozinhos com as flores.'],
    ['nl', 'De tuin is een bron van vreugde voor de kinderen en de ouders, maar het is niet altijd makkelijk.'],
  ])('recognises %s', (lang, text) => {
    expect(detectLanguage(text)).toBe(lang);
  });

  it('answers null when there is too little text, or none of the known languages', () => {
    expect(detectLanguage('')).toBeNull();
    expect(detectLanguage('Sourdough')).toBeNull();
    expect(detectLanguage('Ceci est')).toBeNull();
    expect(detectLanguage('これは日本語の文章です。庭はとても美しいです。')).toBeNull();
  });

  it('is deterministic and ignores case and punctuation', () => {
    const text = 'THE GARDEN, AND THE CHILDREN: THIS IS WHAT YOU NEED FROM IT!';
    expect(detectLanguage(text)).toBe('en');
    expect(detectLanguage(text)).toBe(detectLanguage(text.toLowerCase()));
  });
});
