// Typeset every <span class="tex"> with the KaTeX bundled in this page (no network).
document.querySelectorAll('span.tex').forEach(function (el) {
  if (typeof katex === 'undefined') return;
  katex.render(el.textContent, el, {throwOnError: false, output: 'htmlAndMathml'});
  el.classList.add('rendered');
});
