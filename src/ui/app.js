document.body.append('Smriti');
