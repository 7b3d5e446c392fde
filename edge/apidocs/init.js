// Renders the OpenAPI document named by #swagger-ui's data-url with Swagger UI. It is a file
// of its own, not an inline script, so that the page's Content-Security-Policy can refuse
// every inline script.
window.addEventListener("load", function () {
  var root = document.getElementById("swagger-ui");
  window.ui = SwaggerUIBundle({
    url: root.dataset.url,
    domNode: root,
    deepLinking: true,
    docExpansion: "list",
    defaultModelsExpandDepth: 0,
    // Swagger UI would otherwise send the document to validator.swagger.io and show its badge.
    validatorUrl: null,
    // A token typed into "Authorize" stays in this tab only.
    persistAuthorization: false,
  });
});
